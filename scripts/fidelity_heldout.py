#!/usr/bin/env python3
"""Held-out fidelity: measured bench runs against the twin's prediction for the same load.

For each measured run directory (infereng bench --out DIR), reads its offered rate and
duration from manifest.json, runs `infereng simulate --card CARD --profile PROFILE --rate R
--duration D --json` for the same rate AND the same duration (in overload the queue grows for
as long as arrivals last, so a longer twin run is a different experiment: docs/FIDELITY.md,
"(b3, session 8)"; the run's warm-up is left out of the twin's window too), and prints measured vs predicted TTFT P50/P99, TPOT P50, E2E P50 and
output tokens/s as a Markdown table with the relative error.

Paired (the "paired" rows): the twin draws the same arrivals as the run (same seed, rate and
duration; or, with --replay, the run's own send times), so request i is the same request on
both sides. For each request in the run's window that both completed, the relative error of
its TTFT, TPOT and E2E; the rows give the median of those per-request errors and how many
were paired. A percentile of a short run is decided by a few requests (at 0.4 requests/s a
30 s run holds ~11, and one request more or less overlapping another moves its TPOT P50 by a
third); the paired median asks whether the twin prices each request right, which is what a
calibration can be judged on. Pairing is skipped, and says why, when the send times differ (and with --replay or
--pre-run, whose twin numbers its requests apart from the run's).

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
import tempfile
from datetime import datetime

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


def start_s(manifest, run):
    t = manifest.get("start_time_utc")
    if not t:
        sys.exit(f"fidelity_heldout: {run}/manifest.json: no start_time_utc (needed by --replay)")
    return datetime.strptime(t, "%Y-%m-%dT%H:%M:%SZ").timestamp()


def records(path, what):
    """(line number, record) of a records JSONL file; exits naming the file when it cannot be read."""
    try:
        with open(path) as f:
            lines = list(enumerate(f, 1))
    except OSError as e:
        sys.exit(f"fidelity_heldout: {path}: cannot read {what}: {e}")
    for n, line in lines:
        if line.strip():
            try:
                yield n, json.loads(line)
            except ValueError as e:
                sys.exit(f"fidelity_heldout: {path}:{n}: not JSON: {e}")


def requests_of(run):
    """(send offset s from the run's start, prompt tokens, output tokens) of every request sent."""
    out = []
    path = os.path.join(run, "requests.jsonl")
    for n, r in records(path, "the run's requests"):
        try:
            t = r["t_send_ms"]
            prompt = r.get("prompt_tokens") or r["input_tokens_target"]
            output = r.get("completion_tokens") or r["output_tokens_target"]
        except (KeyError, TypeError, AttributeError) as e:
            sys.exit(f"fidelity_heldout: {path}:{n}: not a request record with t_send_ms and token counts: {e}")
        if t is not None and t >= 0 and prompt and output:
            out.append((t / 1000.0, int(prompt), int(output)))
    return sorted(out)


def per_request(path, warmup_ms):
    """{id: (t_send ms, TTFT ms, TPOT ms or None, E2E ms)}, as docs/metrics.md defines them, of the requests of a records file that
    completed without error inside the window (t_sched >= warmup)."""
    out = {}
    for n, r in records(path, "the records"):
        try:
            if r.get("error") not in (None, "", "none") or not r.get("chunks"):
                continue
            if r["t_sched_ms"] is None or r["t_sched_ms"] < warmup_ms:
                continue
            # docs/metrics.md: from the send to the first and last output events.
            send, first, last = r["t_send_ms"], r["chunks"][0][0], r["chunks"][-1][0]
            tokens = r.get("completion_tokens") or 0
            tpot = (last - first) / (tokens - 1) if tokens > 1 and len(r["chunks"]) > 1 else None
            out[r["id"]] = (send, first - send, tpot, last - send)
        except (KeyError, TypeError, IndexError, AttributeError) as e:
            sys.exit(f"fidelity_heldout: {path}:{n}: not a request record with t_sched_ms, t_send_ms "
                     f"and chunks: {e}")
    return out


def paired_rows(measured, twin):
    """[(label, median signed relative error, pairs)] over requests both sides completed, or a
    reason string when the two did not send the same requests at the same times."""
    ids = sorted(set(measured) & set(twin))
    if not ids:
        return "no request completed on both sides"
    # The same draw sends at the same offsets (ms); 50 ms allows the client's send lag.
    off = [abs(measured[i][0] - twin[i][0]) for i in ids]
    if sorted(off)[len(off) // 2] > 50:
        return f"the send times differ (median {sorted(off)[len(off) // 2]:.0f} ms apart): not the same draw"
    rows = []
    for label, k in (("TTFT", 1), ("TPOT", 2), ("E2E", 3)):
        errs = sorted((twin[i][k] - measured[i][k]) / measured[i][k] for i in ids
                      if measured[i][k] and twin[i][k] is not None)
        if errs:
            rows.append((label, errs[len(errs) // 2] if len(errs) % 2 else
                         (errs[len(errs) // 2 - 1] + errs[len(errs) // 2]) / 2, len(errs)))
    return rows


def write_trace(path, parts):
    """Mooncake JSONL (ms timestamps, distinct hash_ids: no prefix shared, as our random
    prompts share none) of [(offset s, requests)] parts."""
    next_hash = 0
    with open(path, "w") as f:
        for offset, reqs in parts:
            for t, prompt, output in reqs:
                blocks = (prompt + 511) // 512
                ids = list(range(next_hash, next_hash + blocks))
                next_hash += blocks
                f.write(json.dumps({"timestamp": round((offset + t) * 1000, 3), "input_length": prompt,
                                    "output_length": output, "hash_ids": ids}) + "\n")


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
    ap.add_argument("--replay", action="store_true",
                    help="the twin replays each run's own requests (send times and token counts from its "
                         "requests.jsonl) instead of a fresh draw at its rate")
    ap.add_argument("--history", action="store_true",
                    help="with --replay: before each run the twin first serves the runs named before it (and "
                         "every --history-run), at their real start-time offsets, left out of its window: the "
                         "engine's state when a run starts is what that traffic left (llama.cpp: where the "
                         "cells lie)")
    ap.add_argument("--history-run", action="append", default=[], metavar="DIR",
                    help="a run served before the first measured one (e.g. the calibration run); repeatable")
    ap.add_argument("runs", nargs="+", help="measured run directories")
    a = ap.parse_args()
    if a.history and not a.replay:
        sys.exit("fidelity_heldout: --history needs --replay")
    print(f"profile {a.profile}, card {a.card}" + "".join(f", --set {s}" for s in a.set) +
          (f", pre-run {a.pre_run:g} s" if a.pre_run else "") + (", replayed" if a.replay else "") +
          (", after the runs before it" if a.history else ""))
    earlier = [(start_s(load(os.path.join(r, "manifest.json"), "the run's manifest"), r), requests_of(r))
               for r in a.history_run] if a.history else []
    tmp = tempfile.TemporaryDirectory()
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
        records = os.path.join(tmp.name, "twin-" + os.path.basename(os.path.normpath(run)) + ".jsonl")
        cmd = [a.binary, "simulate", "--card", a.card, "--profile", a.profile, "--no-history", "--json",
               "--records", records]
        if a.replay:
            mine = (start_s(manifest, run), requests_of(run))
            t0 = min([s0 for s0, _ in earlier] + [mine[0]])
            parts = [(s0 - t0, reqs) for s0, reqs in earlier] + [(mine[0] - t0, mine[1])]
            trace = os.path.join(tmp.name, os.path.basename(os.path.normpath(run)) + ".jsonl")
            write_trace(trace, parts)
            # The window starts at the run's own warm-up end, after the history; the trace's
            # first arrival is its t = 0.
            first = min(o + r[0][0] for o, r in parts if r)
            cmd += ["--trace", trace, "--trace-format", "mooncake",
                    "--warmup", f"{max(0.0, (mine[0] - t0) - first + (load_.get('warmup_s') or 0)):.3f}s"]
            if a.history:
                earlier.append(mine)
        else:
            cmd += ["--rate", str(rate), "--duration", f"{duration + a.pre_run}s", "--warmup", f"{warmup}s"]
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
        name = os.path.basename(os.path.normpath(run))
        if a.replay or a.pre_run:
            paired = "--replay and --pre-run number the twin's requests apart from the run's"
        else:
            paired = paired_rows(per_request(os.path.join(run, "requests.jsonl"), warmup * 1000),
                                 per_request(records, -1))
        if isinstance(paired, str):
            print(f"| {name} | {rate:g} | {duration:g} | paired | not paired: {paired} | | |")
        else:
            for label, med, n in paired:
                print(f"| {name} | {rate:g} | {duration:g} | {label}, per request (paired, median of {n}) | | | {med * 100:+.0f}% |")


if __name__ == "__main__":
    main()
