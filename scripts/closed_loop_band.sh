#!/bin/bash
# The twin's band over seeds for a closed loop of users started together (docs/FIDELITY.md (b6)):
# per concurrency, the median [min, max] over seeds 1..N of TTFT mean, TTFT P50, TPOT P50 and
# requests/s. Usage (from the repository root, after a release build):
#   P=PROFILE [CARD=docs/llamacpp/rand-llama-cpu.yaml] [CS="4 2"] [N=20] [W=0.5ms] [J=0.3ms] \
#     [DURATION=60s] scripts/closed_loop_band.sh
# W is engine.admission_window and J cost.front_end_jitter (0: not set; the defaults are the
# values FIDELITY.md (b6) used). EXTRA: more simulate flags, e.g.
# EXTRA="--set engine.scheduler=llamacpp --set engine.slots=4" (the slot engine).
set -uo pipefail
B=${INFERENG:-build/release/infereng}
: "${P:?P=PROFILE (an infereng profile of the engine) is required}"
CARD=${CARD:-docs/llamacpp/rand-llama-cpu.yaml}
W=${W:-0.5ms}; J=${J:-0.3ms}; N=${N:-20}; DURATION=${DURATION:-60s}
sets=()
[ "$W" != 0 ] && sets+=(--set "engine.admission_window=$W")
[ "$J" != 0 ] && sets+=(--set "cost.front_end_jitter=$J")
for c in ${CS:-4 2}; do
  for s in $(seq "$N"); do
    "$B" simulate --card "$CARD" --profile "$P" --concurrency "$c" --ramp 0s --duration "$DURATION" --warmup 0s \
      --seed "$s" "${sets[@]}" ${EXTRA:-} --json 2>/dev/null |
      python3 -c "import json,sys; d=json.load(sys.stdin); print(d['ttft_ms']['mean'], d['ttft_ms']['p50'], d['tpot_ms']['p50'], d['requests_per_s'])"
  done | python3 -c "
import sys, statistics as st
cols = list(zip(*[[float(x) for x in l.split()] for l in sys.stdin]))
names = ['TTFT mean', 'TTFT P50', 'TPOT P50', 'requests/s']
print('users $c, window $W, jitter $J:', ' | '.join(f'{n} {st.median(c):.4g} [{min(c):.4g}, {max(c):.4g}]' for n, c in zip(names, cols)))"
done
