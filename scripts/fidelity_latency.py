#!/usr/bin/env python3
"""The twin against published serving LATENCY rows (docs/FIDELITY.md, "(d) Latency rows").

Owns: the list of published TTFT / ITL / TPOT measurements at a stated load (source, setup,
figure), the workload card each row becomes, and the error arithmetic. Twin runs only
(`infereng simulate`); nothing is sent anywhere. Companion of fidelity_published.py (offline
throughput rows).

  scripts/fidelity_latency.py --infereng build/release/infereng               # catalog defaults
  scripts/fidelity_latency.py --infereng ... --set cost.eff_bandwidth=0.7 ...  # one setting set

Rows (sources verbatim in docs/FIDELITY.md (d)):
  S1  NVIDIA NIM 1.8.0 "Performance" page (docs.nvidia.com/nim/benchmarking/llm/1.0.0/performance):
      Llama-3.3-70B-Instruct fp8 TP2 on 2x H100 80G, 5000 in / 500 out (and 500 / 2000), AIPerf at
      a fixed concurrency over HTTP; TTFT and ITL as the page prints them (AIPerf's averages).
  S2  sgl-project/sglang benchmark/benchmark_vllm_060/README.md @120affb9: vLLM 0.6.0 and SGLang
      0.3.0, Llama-3.1-8B bf16 on 1x A100 80G and Llama-3.1-70B bf16 TP4 on 4x H100 80G, ShareGPT
      at Poisson 4 and 8 requests/s; medians. ShareGPT lengths are not in the README: the card uses
      the means of the same command's run in sglang issue #2097 (269081 / 1200 = 224 input,
      226901 / 1200 = 189 output tokens), fixed -- an approximation the table states.
"""
import argparse, concurrent.futures, json, os, statistics, subprocess, sys, tempfile

# (id, source, engine, model, accelerator, tp, precision, isl, osl, load, value,
#  published {metric: (value, stat)})  load: ("c", N) closed loop of N users, ("r", R) Poisson R rps
ROWS = [
    ("nim-c1", "S1", "NIM", "llama-3.3-70b", "h100-sxm", 2, "fp8", 5000, 500, ("c", 1), {"ttft": (406.77, "mean"), "itl": (18.58, "mean")}),
    ("nim-c5", "S1", "NIM", "llama-3.3-70b", "h100-sxm", 2, "fp8", 5000, 500, ("c", 5), {"ttft": (546.7, "mean"), "itl": (21.83, "mean")}),
    ("nim-c25", "S1", "NIM", "llama-3.3-70b", "h100-sxm", 2, "fp8", 5000, 500, ("c", 25), {"ttft": (688.69, "mean"), "itl": (38.75, "mean")}),
    ("nim-c50", "S1", "NIM", "llama-3.3-70b", "h100-sxm", 2, "fp8", 5000, 500, ("c", 50), {"ttft": (834.51, "mean"), "itl": (59.73, "mean")}),
    ("nim-c100", "S1", "NIM", "llama-3.3-70b", "h100-sxm", 2, "fp8", 5000, 500, ("c", 100), {"itl": (92.91, "mean"), "tput": (917.26, "")}),
    ("nim-c250", "S1", "NIM", "llama-3.3-70b", "h100-sxm", 2, "fp8", 5000, 500, ("c", 250), {"itl": (93.2, "mean"), "tput": (920.12, "")}),
    ("nim-2000-c1", "S1", "NIM", "llama-3.3-70b", "h100-sxm", 2, "fp8", 500, 2000, ("c", 1), {"ttft": (47.77, "mean"), "itl": (18.91, "mean")}),
    ("vllm-8b-r4", "S2", "vLLM 0.6.0", "llama-3.1-8b", "a100-80gb", 1, "bf16", 224, 189, ("r", 4), {"tpot": (14.14, "p50")}),
    ("vllm-8b-r8", "S2", "vLLM 0.6.0", "llama-3.1-8b", "a100-80gb", 1, "bf16", 224, 189, ("r", 8), {"tpot": (17.09, "p50")}),
    ("vllm-70b-r4", "S2", "vLLM 0.6.0", "llama-3.1-70b", "h100-sxm", 4, "bf16", 224, 189, ("r", 4), {"tpot": (23.58, "p50")}),
    ("vllm-70b-r8", "S2", "vLLM 0.6.0", "llama-3.1-70b", "h100-sxm", 4, "bf16", 224, 189, ("r", 8), {"tpot": (29.15, "p50")}),
    ("sglang-8b-r4", "S2", "SGLang 0.3.0", "llama-3.1-8b", "a100-80gb", 1, "bf16", 224, 189, ("r", 4), {"ttft": (31.98, "p50"), "tpot": (13.17, "p50")}),
    ("sglang-8b-r8", "S2", "SGLang 0.3.0", "llama-3.1-8b", "a100-80gb", 1, "bf16", 224, 189, ("r", 8), {"ttft": (35.68, "p50"), "tpot": (17.85, "p50")}),
    ("sglang-70b-r4", "S2", "SGLang 0.3.0", "llama-3.1-70b", "h100-sxm", 4, "bf16", 224, 189, ("r", 4), {"ttft": (53.94, "p50"), "tpot": (25.03, "p50")}),
    ("sglang-70b-r8", "S2", "SGLang 0.3.0", "llama-3.1-70b", "h100-sxm", 4, "bf16", 224, 189, ("r", 8), {"ttft": (58.11, "p50"), "tpot": (33.07, "p50")}),
]
# vLLM 0.6.0 ran --num-scheduler-steps 10: a stream gets 10 tokens per chunk and the first chunk
# waits for the step group, so its TTFT and ITL are not per token; only its TPOT is compared.

CARD = """name: latency-{id}
product: {{task: chat, modality: text, max_context_tokens: 131072, max_input_tokens: 130000, max_output_tokens: 8192, streaming: true, timeout: 10h}}
traffic:
  arrival: {{process: poisson, rate: {rate}rps}}
  input_tokens: {{fixed: {isl}}}
  output_tokens: {{fixed: {osl}}}
slo: {{e2e: {{p99: 10h}}}}
model: {{id: {model}, architecture: {model}, precision: {prec}, kv_precision: {prec}}}
deployment: {{accelerator: {acc}, count: {tp}, tp: {tp}, replicas: 1}}
bench: {{duration: {duration}s, warmup: {warmup}s, seed: 1}}
"""


def run_row(args, tmp, row):
    rid, _, _, model, acc, tp, prec, isl, osl, (kind, n), _ = row
    rate = n if kind == "r" else 1
    duration = 600 if kind == "r" else 900
    path = os.path.join(tmp, rid + ".yaml")
    with open(path, "w") as f:
        f.write(CARD.format(id=rid, rate=rate, isl=isl, osl=osl, model=model, prec=prec, acc=acc, tp=tp,
                            duration=duration, warmup=duration // 10))
    cmd = [args.infereng, "simulate", "--no-history", "--card", path, "--json"]
    if kind == "c":
        # The users start over the first minute: identical users with fixed lengths on a
        # deterministic twin otherwise stay in lockstep for the whole run (their prompts arrive
        # together every cycle, TTFT +100% at 5-25 users), which real servers' noise breaks up.
        cmd += ["--concurrency", str(n), "--ramp", "60s"]
    for s in args.set:
        cmd += ["--set", s]
    if args.show_commands:
        print(" ".join(cmd), file=sys.stderr)
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def twin_value(j, metric, stat):
    key = {"ttft": "ttft_ms", "itl": "itl_ms", "tpot": "tpot_ms"}.get(metric)
    if metric == "tput":
        return j["output_tokens_per_s"]
    return j[key]["mean" if stat == "mean" else stat]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--infereng", default="build/release/infereng")
    ap.add_argument("--set", action="append", default=[], help="a twin setting for every row")
    ap.add_argument("--show-commands", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp, concurrent.futures.ThreadPoolExecutor(2) as pool:
        results = list(pool.map(lambda r: run_row(args, tmp, r), ROWS))
    errors = {}
    print("| row | engine | model, accelerator x tp, precision | in / out | load | metric | published | twin | error |")
    print("|---|---|---|---|---|---|---|---|---|")
    for row, j in zip(ROWS, results):
        rid, src, engine, model, acc, tp, prec, isl, osl, (kind, n), pub = row
        load = f"{n} users" if kind == "c" else f"{n} rps"
        for metric, (value, stat) in pub.items():
            twin = twin_value(j, metric, stat)
            err = (twin - value) / value
            errors.setdefault(metric, []).append(abs(err))
            name = f"{metric.upper()} {stat}".strip() if metric != "tput" else "output tok/s"
            print(f"| {rid} ({src}) | {engine} | {model}, {acc} x{tp}, {prec} | {isl} / {osl} | {load} | {name} | "
                  f"{value:g} | {twin:.4g} | {err * 100:+.0f}% |")
    print()
    for metric, e in errors.items():
        print(f"median |error| {metric.upper()}: {statistics.median(e) * 100:.1f}% over {len(e)} rows")


if __name__ == "__main__":
    main()
