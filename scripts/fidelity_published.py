#!/usr/bin/env python3
"""Regenerates the published-results table of docs/FIDELITY.md.

Owns: the list of published GPU measurements the twin is compared with (source, setup,
figure), the workload card each row becomes, and the error arithmetic. Twin runs only
(`infereng simulate`, milliseconds to a second each); nothing is sent anywhere.

  scripts/fidelity_published.py --infereng build/release/infereng            # catalog defaults
  scripts/fidelity_published.py --infereng ... --set cost.eff_bandwidth=0.7 ...  # one setting set
  scripts/fidelity_published.py --infereng ... --fit --scale 0.1              # fit per family

Every twin command it runs is printed with --show-commands, so each row is reproducible by hand.
"""
import argparse, concurrent.futures, itertools, json, os, statistics, subprocess, sys, tempfile

# TensorRT-LLM perf-overview, v1.0 docs (NVIDIA/TensorRT-LLM commit 00f37686aa85,
# docs/source/performance/perf-overview.md): trtllm-bench throughput, PyTorch backend,
# ModelOpt FP8 checkpoints, fixed ISL/OSL (stdev 0), all requests queued at once,
# metric "Total Output Throughput (tokens/sec)". Request counts from that page.
SRC = "TRT-LLM v1.0 perf-overview"
N_REQ = {(128, 128): 30000, (128, 2048): 3000, (128, 4096): 1500, (500, 2000): 3000,
         (1000, 1000): 3000, (1000, 2000): 1500, (2048, 128): 3000, (2048, 2048): 1500,
         (5000, 500): 1500, (20000, 2000): 1000}
# (model, accelerator, tp, isl, osl, published output tok/s)
ROWS = [
    ("llama-3.1-8b", "h100-sxm", 1, 128, 128, 28312),
    ("llama-3.1-8b", "h100-sxm", 1, 128, 2048, 22714),
    ("llama-3.1-8b", "h100-sxm", 1, 1000, 1000, 15220),
    ("llama-3.1-8b", "h100-sxm", 1, 2048, 128, 3450),
    ("llama-3.1-8b", "h100-sxm", 1, 2048, 2048, 9305),
    ("llama-3.1-8b", "h100-sxm", 1, 5000, 500, 3459),
    ("llama-3.1-8b", "h200", 1, 128, 128, 27911),
    ("llama-3.1-8b", "h200", 1, 128, 2048, 26221),
    ("llama-3.1-8b", "h200", 1, 1000, 1000, 17744),
    ("llama-3.1-8b", "h200", 1, 2048, 128, 3538),
    ("llama-3.1-8b", "h200", 1, 2048, 2048, 12194),
    ("llama-3.1-8b", "h200", 1, 20000, 2000, 1804),
    ("llama-3.3-70b", "h100-sxm", 2, 128, 128, 6378),
    ("llama-3.3-70b", "h100-sxm", 2, 128, 2048, 6651),
    ("llama-3.3-70b", "h100-sxm", 2, 1000, 1000, 4205),
    ("llama-3.3-70b", "h100-sxm", 2, 2048, 128, 762),
    ("llama-3.3-70b", "h100-sxm", 2, 2048, 2048, 3082),
    ("llama-3.3-70b", "h100-sxm", 2, 5000, 500, 898),
    ("llama-3.3-70b", "h200", 1, 128, 128, 3803),
    ("llama-3.3-70b", "h200", 1, 128, 2048, 4336),
    ("llama-3.3-70b", "h200", 1, 1000, 1000, 2909),
    ("llama-3.3-70b", "h200", 1, 2048, 128, 442),
    ("llama-3.3-70b", "h200", 1, 2048, 2048, 2003),
    ("llama-3.3-70b", "h200", 1, 20000, 2000, 283),
    ("llama-3.1-405b", "h100-sxm", 8, 128, 2048, 4340),
    ("llama-3.1-405b", "h100-sxm", 8, 1000, 1000, 2919),
    ("llama-3.1-405b", "h100-sxm", 8, 2048, 128, 453),
    ("llama-3.1-405b", "h200", 8, 128, 2048, 5348),
    ("llama-3.1-405b", "h200", 8, 1000, 1000, 3330),
    ("llama-3.1-405b", "h200", 8, 2048, 128, 456),
]
# trtllm-bench PyTorch-backend defaults the card states: max_batch_size 2048,
# max_num_tokens 8192, capacity scheduler GUARANTEED_NO_EVICT, no chunked prefill,
# kv_cache_free_gpu_mem_fraction 0.90 (the page: 0.95 where it fits). Without chunking a prompt
# longer than max_num_tokens cannot run, and trtllm-bench sizes max_num_tokens from the data
# set, so the card uses max(8192, ISL + 2048): the twin counts the running decodes against the
# same budget, so a budget of exactly ISL admits a prompt only into an empty batch.
ENGINE_SETS = ["engine.capacity_policy=guaranteed_no_evict", "engine.enable_chunked_prefill=false"]

CARD = """name: fidelity-{model}-{acc}-tp{tp}-{isl}-{osl}
product: {{task: batch, modality: text, max_context_tokens: 131072, max_input_tokens: 130000, max_output_tokens: 8192, streaming: true, timeout: 10h}}
traffic:
  class: offline
  arrival: {{process: poisson, rate: 1rps}}
  input_tokens: {{fixed: {isl}}}
  output_tokens: {{fixed: {osl}}}
slo: {{e2e: {{p99: 10h}}}}
model: {{id: {model}, architecture: {model}, precision: fp8, kv_precision: fp8}}
deployment: {{accelerator: {acc}, count: {tp}, tp: {tp}, replicas: 1}}
engine: {{max_num_seqs: 2048, max_num_batched_tokens: {mnt}, gpu_memory_utilization: 0.9}}
"""


def card_path(tmp, row):
    model, acc, tp, isl, osl, _ = row
    p = os.path.join(tmp, f"{model}-{acc}-tp{tp}-{isl}-{osl}.yaml")
    if not os.path.exists(p):
        with open(p, "w") as f:
            f.write(CARD.format(model=model, acc=acc, tp=tp, isl=isl, osl=osl, mnt=max(8192, isl + 2048)))
    return p


def twin(binary, tmp, row, sets, show):
    n = N_REQ[(row[3], row[4])]
    cmd = [binary, "simulate", "--card", card_path(tmp, row), "--rate", "inf",
           "--requests", str(n), "--json"]
    for s in ENGINE_SETS + sets:
        cmd += ["--set", s]
    if show:
        print("$ " + " ".join(cmd).replace(tmp, "$CARDS"), file=sys.stderr)
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        return None, out.stderr.strip().splitlines()[-1] if out.stderr else f"rc {out.returncode}"
    d = json.loads(out.stdout)
    return d["twin"]["makespan"]["output_tokens_per_s"], None


JOBS = 4


def err(pred, pub):
    return 100.0 * (pred - pub) / pub


def evaluate(binary, tmp, rows, sets, show=False):
    with concurrent.futures.ThreadPoolExecutor(JOBS) as ex:
        outs = list(ex.map(lambda r: twin(binary, tmp, r, sets, show), rows))
    res = [(r, p, e) for r, (p, e) in zip(rows, outs)]
    errs = [abs(err(p, r[5])) for r, p, e in res if p is not None]
    return res, (statistics.median(errs) if errs else float("inf"))


def family(acc):
    return "hopper" if acc in ("h100-sxm", "h200") else acc


GRID = {  # the fit's search space (coarse; same values for every row of a family)
    "cost.eff_flops": [0.4, 0.45, 0.5, 0.6],
    "cost.eff_bandwidth": [0.6, 0.7, 0.8],
    "cost.layer_overhead": ["0us", "5us", "10us"],
    "cost.interconnect_latency": ["1us", "10us", "20us"],
}


def fit(binary, tmp, rows, passes):
    """Coordinate descent over GRID: each key in turn takes the grid value that minimises
    the median |error| with the others held, `passes` times (a full grid is ~150x the runs)."""
    cur = {"cost.eff_flops": 0.6, "cost.eff_bandwidth": 0.8,
           "cost.layer_overhead": "0us", "cost.interconnect_latency": "1us"}
    best = None
    for _ in range(passes):
        for k in GRID:
            for v in GRID[k]:
                trial = dict(cur, **{k: v})
                sets = [f"{kk}={vv}" for kk, vv in trial.items()]
                _, med = evaluate(binary, tmp, rows, sets)
                print(f"fit: median |err| {med:5.1f}%  {' '.join(sets)}", file=sys.stderr, flush=True)
                if best is None or med < best[0]:
                    best, cur = (med, sets), trial
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--infereng", required=True)
    ap.add_argument("--set", action="append", default=[])
    ap.add_argument("--fit", action="store_true")
    ap.add_argument("--scale", type=float, default=1.0,
                    help="scale the request counts (at least 200; for a quick fit)")
    ap.add_argument("--passes", type=int, default=1, help="coordinate-descent passes of --fit")
    ap.add_argument("--show-commands", action="store_true")
    ap.add_argument("--jobs", type=int, default=4, help="twin runs at once (each single-threaded)")
    a = ap.parse_args()
    global JOBS
    JOBS = a.jobs
    if not (os.path.isfile(a.infereng) and os.access(a.infereng, os.X_OK)):
        print(f"fidelity_published.py: --infereng {a.infereng}: not an executable file", file=sys.stderr)
        sys.exit(2)
    with tempfile.TemporaryDirectory() as tmp:
        sets = a.set
        if a.scale != 1.0:
            for k in N_REQ:
                N_REQ[k] = max(200, int(N_REQ[k] * a.scale))
        if a.fit:
            fams = sorted({family(r[1]) for r in ROWS})
            for fam in fams:
                med, sets = fit(a.infereng, tmp, [r for r in ROWS if family(r[1]) == fam], a.passes)
                print(f"best for {fam}: median |err| {med:.1f}%  --set " + " --set ".join(sets))
            return
        res, med = evaluate(a.infereng, tmp, ROWS, sets, a.show_commands)
        print("| model | GPU | TP | ISL/OSL | requests | published tok/s | twin tok/s | error |")
        print("|---|---|---|---|---|---|---|---|")
        for r, p, e in res:
            model, acc, tp, isl, osl, pub = r
            cell = f"{p:,.0f} | {err(p, pub):+.0f}%" if p is not None else f"cannot express ({e}) | -"
            print(f"| {model} | {acc} | {tp} | {isl}/{osl} | {N_REQ[(isl, osl)]} | {pub:,} | {cell} |")
        print(f"\nmedian |error|: {med:.1f}% over {sum(p is not None for _, p, _ in res)} rows"
              + (f"  (--set {' --set '.join(sets)})" if sets else "  (catalog defaults)"))


if __name__ == "__main__":
    main()
