#!/usr/bin/env python3
"""The twin's roofline step prices against kernel times other people measured on GPUs.

Owns: reading data/sources/vidur-kernel-profiles.csv (a subset of microsoft/vidur's published
H100 and A100 operator profiles; provenance in data/sources/vidur-kernel-profiles.md), asking
`infereng fit --json` for the twin's price of a prefill of T tokens on the same model shape,
accelerator and TP degree, and printing measured / twin per layer and per all-reduce. Twin runs
only (`infereng fit`, ~20 ms each); nothing is sent anywhere.

  scripts/kernel_check.py --infereng build/release/infereng
  scripts/kernel_check.py --infereng ... --eff-flops 0.7     # the same with another efficiency

What is compared (FIDELITY.md (d6) says why these pairs):
- per layer: Vidur's four linear layers (QKV, output, gate+up, down; medians, bf16) against the
  twin's max(compute, memory) of a T-token prefill divided by the layers. The twin's figure also
  holds attention FLOPs, the LM head of the one sampled token, KV writes and activations (a few %
  at most in these shapes), so a ratio a little under 1 is expected where the roofline is right.
- elementwise work per layer (Vidur: two RMSNorms, RoPE, SiLU*mul, residual add) against the
  twin's cost.layer_overhead.
- one all-reduce of T x hidden BF16 values on one node (NCCL, Vidur's h100_dgx / a100_dgx)
  against the twin's comm time of the step divided by its 2 x layers calls.
"""
import argparse, csv, json, os, statistics, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "data", "sources", "vidur-kernel-profiles.csv")
LAYERS = {"llama-3.1-70b": 80, "llama-3.1-8b": 32}


def twin_prefill(args, cache, model, acc, tp, tokens):
    key = (model, acc, tp, tokens)
    if key not in cache:
        cmd = [args.infereng, "fit", "--model", model, "--accelerator", acc, "--tp", str(tp), "--precision", "bf16",
               "--context", str(tokens), "--json", "--eff-flops", str(args.eff_flops),
               "--eff-bandwidth", str(args.eff_bandwidth)]
        # Exit 1 is "does not fit in memory" (70B on one GPU): the step's price is still printed.
        out = subprocess.run(cmd, capture_output=True, text=True)
        if out.returncode not in (0, 1):
            sys.exit(f"kernel_check: {' '.join(cmd)} failed ({out.returncode}): {out.stderr.strip()}")
        j = json.loads(out.stdout)
        cache[key] = (j["roofline"]["prefill"], j["roofline"]["efficiency"])
    return cache[key]


def regime(tokens):
    return "T <= 64 (memory-bound)" if tokens <= 64 else ("128 <= T <= 512 (near the ridge)" if tokens <= 512
                                                          else "T >= 1024 (compute-bound)")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--infereng", default="build/release/infereng")
    ap.add_argument("--data", default=DATA)
    ap.add_argument("--eff-flops", type=float, default=0.5, help="the twin's FLOP efficiency (catalog default 0.5)")
    ap.add_argument("--eff-bandwidth", type=float, default=0.8, help="the twin's bandwidth efficiency (default 0.8)")
    ap.add_argument("--tokens", default="1,32,128,224,512,2048,4096", help="T values printed per row (all are summarised)")
    args = ap.parse_args()
    shown = {int(t) for t in args.tokens.split(",")}

    with open(args.data) as f:
        rows = list(csv.DictReader(f))
    cache = {}
    ratios, other_ratios, ar_ratios = {}, [], {}
    print("Per layer: Vidur's linear layers (median ms) / the twin's max(compute, memory) per layer")
    print(f"{'accelerator':10} {'Vidur model':28} {'TP':>2} {'T':>5} {'measured':>9} {'twin':>8} {'ratio':>6}"
          f" {'elementwise':>11} {'twin fixed':>10}  achieved FLOP/s of peak")
    for r in rows:
        if r["kind"] != "layer":
            continue
        model, acc, tp, tokens = r["twin_model"], r["accelerator"], int(r["tp"]), int(r["tokens"])
        pre, eff = twin_prefill(args, cache, model, acc, tp, tokens)
        layers = LAYERS[model]
        twin = max(pre["compute_ms"], pre["memory_ms"]) / layers
        measured, other = float(r["median_ms"]), float(r["other_ms"])
        ratio = measured / twin
        ratios.setdefault((acc, regime(tokens)), []).append(ratio)
        fixed = eff["layer_overhead_us"] / 1000
        if fixed > 0:
            other_ratios.append(other / fixed)
        # FLOP/s the measured linear layers achieved, as a fraction of the twin's peak: the
        # twin's compute_ms is FLOPs / (eff x peak), so FLOPs / peak = compute_ms x eff.
        achieved = pre["compute_ms"] * eff["flops"] / layers / measured
        if tokens in shown:
            print(f"{acc:10} {r['vidur_model']:28} {tp:>2} {tokens:>5} {measured:9.3f} {twin:8.3f} {ratio:6.2f}"
                  f" {other:11.3f} {fixed:10.3f}  {achieved:.2f}")
    print("\nMedian measured / twin per layer (linear layers), by regime:")
    for (acc, reg), v in sorted(ratios.items()):
        print(f"  {acc:10} {reg:34} {statistics.median(v):5.2f}  (range {min(v):.2f}-{max(v):.2f}, {len(v)} points)")
    if other_ratios:
        print(f"Elementwise work per layer / cost.layer_overhead: median {statistics.median(other_ratios):.1f}x"
              f" (range {min(other_ratios):.1f}-{max(other_ratios):.1f}x)")

    print("\nOne all-reduce of T x hidden BF16 values (ms): Vidur (NCCL, one node) / the twin's comm per call")
    print(f"{'accelerator':10} {'GPUs':>4} {'hidden':>6} {'T':>5} {'measured':>9} {'twin':>8} {'ratio':>6}")
    for r in rows:
        if r["kind"] != "all_reduce":
            continue
        acc, tp, tokens, hidden = r["accelerator"], int(r["tp"]), int(r["tokens"]), int(r["hidden"])
        model = "llama-3.1-70b" if hidden == 8192 else "llama-3.1-8b"
        pre, _ = twin_prefill(args, cache, model, acc, tp, tokens)
        twin = pre["comm_ms"] / (2 * LAYERS[model])
        measured = float(r["median_ms"])
        ar_ratios.setdefault((acc, tp), []).append(measured / twin)
        if tokens in shown:
            print(f"{acc:10} {tp:>4} {hidden:>6} {tokens:>5} {measured:9.4f} {twin:8.4f} {measured / twin:6.2f}")
    print("\nMedian measured / twin per all-reduce:")
    for (acc, tp), v in sorted(ar_ratios.items()):
        print(f"  {acc:10} {tp} GPUs {statistics.median(v):5.2f}  (range {min(v):.2f}-{max(v):.2f}, {len(v)} sizes)")


if __name__ == "__main__":
    main()
