#!/bin/bash
# The twin against vLLM's published chunked-prefill vs disaggregated-prefill table
# (docs/FIDELITY.md, "(c) Disaggregation"): 2 x TP4 instances with chunked prefill (v0's
# 512-token budget) vs 1 prefill + 1 decode TP4 instance (KV over NVLink, 50 GB/s per GPU),
# Llama-3.1-70B on H100, 400 Poisson requests per rate. Prints mean TTFT and ITL.
set -euo pipefail
B=${B:-build/release/infereng}
CARD=${CARD:-docs/fidelity/vllm-disagg-70b.yaml}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for q in 2 4 8 16; do
  "$B" simulate --card "$CARD" --rate "$q" --requests 400 --set engine.max_num_batched_tokens=512 --json >"$out/agg.json"
  "$B" simulate --card "$CARD" --rate "$q" --requests 400 --set cluster.prefill_replicas=1 \
    --set cluster.kv_transfer_bandwidth=50 --json >"$out/dis.json"
  for f in agg dis; do
    python3 - "$out/$f.json" "$q" "$f" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
d = j["twin"].get("disaggregation")
extra = "" if not d else " transfer %.1f ms, prefill pool busy %.2f" % (d["transfer_ms"]["mean"], d["prefill_busy"])
print("qps %s %s: TTFT mean %.0f ms, ITL mean %.1f ms%s" % (sys.argv[2], sys.argv[3], j["ttft_ms"]["mean"], j["itl_ms"]["mean"], extra))
PY
  done
done
