#!/usr/bin/env python3
"""Blind recovery, from the command line: how well `profile` + `calibrate` recover hidden
cost parameters of the embedded engine, repeated, on this machine's load.

Each trial starts `infereng serve` on 127.0.0.1 with hidden `--set` values, profiles it
(`infereng profile`), calibrates from the card's defaults (`infereng calibrate`) and prints
the fitted values. The same settings as src/job/profile_test.cc's BlindRecovery (8B on an
H100; hidden eff_flops 0.45, eff_bandwidth 0.6, engine.seq_overhead 50 us).

  scripts/blind_recovery.py --infereng build/release/infereng --trials 5
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

CARD = """name: blind
traffic:
  arrival: {process: poisson, rate: 3rps}
  input_tokens: {fixed: 300}
  output_tokens: {fixed: 60}
model:
  architecture: llama-3.1-8b
deployment:
  accelerator: h100-sxm
bench:
  duration: 60s
  warmup: 0s
  seed: 5
"""
HIDDEN = {"cost.eff_flops": 0.45, "cost.eff_bandwidth": 0.6, "engine.seq_overhead": 50e-6}
KEYS = list(HIDDEN) + ["cost.step_overhead"]


def wait_ready(url, deadline):
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(url + "/v1/models", timeout=1):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("serve did not answer " + url)


def trial(args, tmp, i):
    port = args.port + i
    card = os.path.join(tmp, "blind.yaml")
    serve = [args.infereng, "serve", "--card", card, "--host", "127.0.0.1", "--port", str(port),
             "--served-model-name", "blind"]
    for k, v in HIDDEN.items():
        serve += ["--set", f"{k}={v}"]
    srv = subprocess.Popen(serve, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        url = f"http://127.0.0.1:{port}"
        wait_ready(url, time.time() + 30)
        prof = os.path.join(tmp, f"p{i}.json")
        subprocess.run([args.infereng, "profile", "--target", url, "--out", prof, "--max-batch", "8",
                        "--max-prompt", "8192", "--decode-tokens", "16", "--repeats", "3", "--no-occupancy"],
                       check=True, capture_output=True, text=True)
    finally:
        srv.terminate()
        srv.wait(timeout=10)
    out = subprocess.run([args.infereng, "calibrate", prof, "--card", card, "--out", os.path.join(tmp, f"c{i}.json")],
                         check=True, capture_output=True, text=True).stdout
    got = {}
    for key in KEYS:
        m = re.search(r"^\s+" + re.escape(key) + r"\s+(\S+)\s+\+-\s+(\S+)", out, re.M)
        got[key] = (float(m.group(1)), float(m.group(2))) if m else (float("nan"), float("nan"))
    return got


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--infereng", default="build/release/infereng")
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--port", type=int, default=18431)
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "blind.yaml"), "w") as f:
            f.write(CARD)
        for i in range(args.trials):
            got = trial(args, tmp, i)
            rows.append(got)
            print(f"trial {i + 1}: " + ", ".join(f"{k} {v:.4g} +- {s:.2g}" for k, (v, s) in got.items()), flush=True)
    print()
    print("| parameter | hidden | fitted min | median | max | trials within 5% |")
    print("|---|---|---|---|---|---|")
    for key, truth in HIDDEN.items():
        vals = [r[key][0] for r in rows]
        ok = sum(abs(v - truth) <= 0.05 * truth for v in vals)
        print(f"| {key} | {truth:g} | {min(vals):.4g} | {statistics.median(vals):.4g} | {max(vals):.4g} | "
              f"{ok}/{len(vals)} |")


if __name__ == "__main__":
    sys.exit(main())
