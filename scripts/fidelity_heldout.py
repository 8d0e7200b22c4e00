#!/usr/bin/env python3
"""Held-out fidelity: measured bench runs against the twin's prediction for the same load.

For each measured run directory (infereng bench --out DIR), reads its offered rate and
duration from manifest.json, runs `infereng simulate --card CARD --profile PROFILE --rate R
--duration D --json` for the same rate AND the same duration (in overload the queue grows for
as long as arrivals last, so a longer twin run is a different experiment: docs/FIDELITY.md,
"(b3, session 8)"; the run's warm-up is left out of the twin's window too), and prints measured vs predicted TTFT P50/P99, TPOT P50, E2E P50 and
output tokens/s as a Markdown table with the relative error.

  python3 scripts/fidelity_heldout.py --card docs/llamacpp/rand-llama-cpu.yaml \
      --profile calibrated8.json rate-0.3 rate-1.2 rate-2.5 rate-5.0 \
      [--binary build/release/infereng] [--set engine.scheduler=llamacpp --set engine.slots=4] \
      [--pre-run 120]
"""
import argparse
import json
import os
import subprocess
import sys

METRICS = [("TTFT P50", "ttft_ms", "p50"), ("TTFT P99", "ttft_ms", "p99"), ("TPOT P50", "tpot_ms", "p50"),
           ("E2E P50", "e2e_ms", "p50"), ("output tok/s", "output_tokens_per_s", None)]


def value(summary, key, field):
    v = summary.get(key)
    if field is None:
        return v
    return v.get(field) if isinstance(v, dict) else None


def load(path, what):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"fidelity_heldout: {path}: cannot read {what}: {e}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--card", required=True)
    ap.add_argument("--profile", required=True)
    ap.add_argument("--binary", default="build/release/infereng")
    ap.add_argument("--set", action="append", default=[], help="passed to simulate as --set")
    ap.add_argument("--pre-run", type=float, default=0, metavar="SECONDS",
                    help="the twin first serves this long of the same traffic, left out of its window (as the "
                         "run's own warm-up is): the engine's state when a measured run starts is that of a "
                         "server that has already served (llama.cpp: the cells its idle slots hold and where)")
    ap.add_argument("runs", nargs="+", help="measured run directories")
    a = ap.parse_args()
    print(f"profile {a.profile}, card {a.card}" + "".join(f", --set {s}" for s in a.set) +
          (f", pre-run {a.pre_run:g} s" if a.pre_run else ""))
    print("| run | rate (rps) | duration (s) | metric | measured | twin | error |")
    print("|---|---|---|---|---|---|---|")
    for run in a.runs:
        manifest = load(os.path.join(run, "manifest.json"), "the run's manifest")
        measured = load(os.path.join(run, "summary.json"), "the run's summary")
        load_ = manifest.get("load") or {}
        rate, duration = load_.get("rate_rps"), load_.get("duration_s")
        if not rate or not duration:
            sys.exit(f"fidelity_heldout: {run}/manifest.json: load.rate_rps and load.duration_s are needed "
                     f"(an open-loop bench run), got {load_}")
        warmup = (load_.get("warmup_s") or 0) + a.pre_run
        cmd = [a.binary, "simulate", "--card", a.card, "--profile", a.profile, "--rate", str(rate),
               "--duration", f"{duration + a.pre_run}s", "--warmup", f"{warmup}s", "--no-history", "--json"]
        for s in a.set:
            cmd += ["--set", s]
        out = subprocess.run(cmd, capture_output=True, text=True, check=False)
        # Exit 1 is a verdict (an SLO missed, overload), not a failure: the JSON is complete.
        try:
            twin = json.loads(out.stdout) if out.returncode in (0, 1) else None
        except ValueError:
            twin = None
        if twin is None:
            sys.exit(f"fidelity_heldout: {' '.join(cmd)} failed ({out.returncode}): {out.stderr.strip()}")
        for label, key, field in METRICS:
            m, p = value(measured, key, field), value(twin, key, field)
            if m is None or p is None:
                continue
            err = f"{(p - m) / m * 100:+.0f}%" if m else "n/a"
            print(f"| {os.path.basename(os.path.normpath(run))} | {rate:g} | {duration:g} | {label} | {m:.1f} | {p:.1f} | {err} |")


if __name__ == "__main__":
    main()
