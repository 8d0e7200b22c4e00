#!/usr/bin/env python3
"""The twin against published serving LATENCY rows (docs/FIDELITY.md, "(d) Latency rows").

Owns: the list of published TTFT / ITL / TPOT measurements at a stated load (source, setup,
figure), the workload card each row becomes, and the error arithmetic. Twin runs only
(`infereng simulate`); nothing is sent anywhere. Companion of fidelity_published.py (offline
throughput rows).

  scripts/fidelity_latency.py --infereng build/release/infereng               # catalog defaults
  scripts/fidelity_latency.py --infereng ... --set cost.eff_bandwidth=0.7 ...  # one setting set
  scripts/fidelity_latency.py --infereng ... --one-preset   # every row on the vllm preset

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
#  published {metric: (value, stat)})  load: ("c", N) closed loop of N users, ("r", R) Poisson R rps,
#  ("n", N) N requests at t = 0 (offline: output tokens over the makespan)
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
    # S2's offline rows: 5,000 prompts at once (bench_serving, rate inf), output tokens/s.
    ("vllm-8b-off", "S2", "vLLM 0.6.0", "llama-3.1-8b", "a100-80gb", 1, "bf16", 224, 189, ("n", 5000), {"tput": (4132.37, "")}),
    ("vllm-70b-off", "S2", "vLLM 0.6.0", "llama-3.1-70b", "h100-sxm", 4, "bf16", 224, 189, ("n", 5000), {"tput": (3700.64, "")}),
    ("sglang-8b-off", "S2", "SGLang 0.3.0", "llama-3.1-8b", "a100-80gb", 1, "bf16", 224, 189, ("n", 5000), {"tput": (4281.51, "")}),
    ("sglang-70b-off", "S2", "SGLang 0.3.0", "llama-3.1-70b", "h100-sxm", 4, "bf16", 224, 189, ("n", 5000), {"tput": (3856.01, "")}),
]
# Each engine's twin preset (engine.scheduler): its scheduling order, host costs and default
# front end. --one-preset runs every row with the twin's default (vllm) instead.
ENGINE_PRESET = {"NIM": "trtllm", "vLLM 0.6.0": "vllm-v0", "SGLang 0.3.0": "sglang-0.3"}
# (row, metric) pairs that set a default (session 16, FIDELITY.md (d3)); every other figure is
# held out. nim-c1 ITL: cost.collective_launch; the 8B S2 TPOTs: the vllm-v0 and sglang-0.3 host
# costs; the 8B SGLang TTFTs: the sglang-0.3 front end.
TRAINING = {("nim-c1", "itl"), ("vllm-8b-r4", "tpot"), ("vllm-8b-r8", "tpot"), ("vllm-8b-off", "tput"),
            ("sglang-8b-r4", "tpot"), ("sglang-8b-r8", "tpot"), ("sglang-8b-off", "tput"), ("sglang-8b-r4", "ttft"),
            ("sglang-8b-r8", "ttft")}
# vLLM 0.6.0 ran --num-scheduler-steps 10: a stream gets 10 tokens per chunk and the first chunk
# waits for the step group, so its TTFT and ITL are not per token; only its TPOT is compared.

CARD = """name: latency-{id}
product: {{task: chat, modality: text, max_context_tokens: 131072, max_input_tokens: 130000, max_output_tokens: 8192, streaming: true, timeout: 10h}}
traffic:
  arrival: {{process: poisson, rate: {rate}rps}}
  input_tokens: {{fixed: {isl}}}
  output_tokens: {out}
slo: {{e2e: {{p99: 10h}}}}
model: {{id: {model}, architecture: {model}, precision: {prec}, kv_precision: {prec}}}
deployment: {{accelerator: {acc}, count: {tp}, tp: {tp}, replicas: 1}}
bench: {{duration: {duration}s, warmup: {warmup}s, seed: 1}}
"""


def run_row(args, tmp, row, ramp_s=60, out_sd=0):
    rid, _, _, model, acc, tp, prec, isl, osl, (kind, n), _ = row
    rate = n if kind == "r" else 1
    duration = 600 if kind != "c" else 900
    path = os.path.join(tmp, f"{rid}-{ramp_s}-{out_sd}.yaml")
    out = f"{{fixed: {osl}}}" if not out_sd else f"{{normal: {{mean: {osl}, stddev: {out_sd}}}}}"
    with open(path, "w") as f:
        f.write(CARD.format(id=rid, rate=rate, isl=isl, out=out, model=model, prec=prec, acc=acc, tp=tp,
                            duration=duration, warmup=duration // 10))
    cmd = [args.infereng, "simulate", "--no-history", "--card", path, "--json"]
    if kind == "n":
        cmd += ["--rate", "inf", "--requests", str(n)]
    if kind == "c":
        # The users start over the first minute. Started together, identical users with fixed
        # lengths form a train on the deterministic twin (each user's prompt arrives while the
        # one before it is prefilled, and waits for it); FIDELITY.md (d5) for the band.
        cmd += ["--concurrency", str(n), "--ramp", f"{ramp_s}s"]
    if not args.one_preset:
        cmd += ["--set", "engine.scheduler=" + ENGINE_PRESET[row[2]]]
    for s in args.set:
        cmd += ["--set", s]
    if args.show_commands:
        print(" ".join(cmd), file=sys.stderr)
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def twin_value(j, metric, stat, offline=False):
    key = {"ttft": "ttft_ms", "itl": "itl_ms", "tpot": "tpot_ms"}.get(metric)
    if metric == "tput":
        # Offline rows: output tokens over the makespan, first request to last completion.
        return j["twin"]["makespan"]["output_tokens_per_s"] if offline else j["output_tokens_per_s"]
    return j[key]["mean" if stat == "mean" else stat]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--infereng", default="build/release/infereng")
    ap.add_argument("--set", action="append", default=[], help="a twin setting for every row")
    ap.add_argument("--show-commands", action="store_true")
    ap.add_argument("--one-preset", action="store_true", help="every row on the default engine preset (vllm)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp, concurrent.futures.ThreadPoolExecutor(2) as pool:
        results = list(pool.map(lambda r: run_row(args, tmp, r), ROWS))
    errors, held = {}, {}
    print("| row | engine | model, accelerator x tp, precision | in / out | load | metric | published | twin | error |")
    print("|---|---|---|---|---|---|---|---|---|")
    for row, j in zip(ROWS, results):
        rid, src, engine, model, acc, tp, prec, isl, osl, (kind, n), pub = row
        load = {"c": f"{n} users", "r": f"{n} rps", "n": f"{n} at once"}[kind]
        for metric, (value, stat) in pub.items():
            twin = twin_value(j, metric, stat, offline=kind == "n")
            err = (twin - value) / value
            errors.setdefault(metric, []).append(abs(err))
            train = (rid, metric) in TRAINING
            if not train:
                held.setdefault(metric, []).append(abs(err))
            name = f"{metric.upper()} {stat}".strip() if metric != "tput" else "output tok/s"
            if train:
                name += " (fit)"
            print(f"| {rid} ({src}) | {engine} | {model}, {acc} x{tp}, {prec} | {isl} / {osl} | {load} | {name} | "
                  f"{value:g} | {twin:.4g} | {err * 100:+.0f}% |")
    # The closed-loop rows' TTFT depends on the users' phases (FIDELITY.md (d5)). Started
    # together (as AIPerf starts them), identical users with fixed lengths form a train: each
    # arrives while the one before it is prefilled and waits for it; noise on the send times
    # (a front end's jitter) keeps the train. Output lengths 5% apart (sd 25 of 500) break it
    # up every cycle: the users then arrive independently. The two are the band's ends.
    closed = [row for row in ROWS if row[9][0] == "c" and row[9][1] > 1 and "ttft" in row[10]]
    if closed:
        with tempfile.TemporaryDirectory() as tmp, concurrent.futures.ThreadPoolExecutor(2) as pool:
            lock = list(pool.map(lambda r: run_row(args, tmp, r, ramp_s=0), closed))
            free = list(pool.map(lambda r: run_row(args, tmp, r, ramp_s=0, out_sd=r[8] // 20), closed))
        print()
        print("| closed-loop row | published TTFT mean | twin, users spread over 60 s | twin, together: a train "
              "| twin, together, output ±5%: independent | published inside |")
        print("|---|---|---|---|---|---|")
        for row, j0, j1 in zip(closed, lock, free):
            spread = twin_value(results[ROWS.index(row)], "ttft", "mean")
            together = twin_value(j0, "ttft", "mean")
            independent = twin_value(j1, "ttft", "mean")
            value = row[10]["ttft"][0]
            inside = "yes" if min(independent, together) <= value <= max(independent, together) else "no"
            print(f"| {row[0]} | {value:g} | {spread:.4g} | {together:.4g} | {independent:.4g} | {inside} |")
    print()
    for metric, e in errors.items():
        h = held.get(metric, [])
        note = f"; held out {statistics.median(h) * 100:.1f}% over {len(h)}" if h and len(h) != len(e) else ""
        print(f"median |error| {metric.upper()}: {statistics.median(e) * 100:.1f}% over {len(e)} rows{note}")


if __name__ == "__main__":
    main()
