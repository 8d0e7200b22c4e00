#!/usr/bin/env python3
"""Does a card written by `characterize --card-sessions` reuse prefixes as its trace does?

Owns: the three twin runs docs/characterize.md quotes, on one deployment with a KV cache far
larger than the load needs (so the figure is reuse, not eviction): the trace replayed with its
own hash_ids, the per-request card `--card-out` writes, and the sessions card
`--card-out --card-sessions` writes. Each card is examples/chat.yaml with its traffic section
replaced by the written one, its context limits raised to the trace's (Mooncake prompts reach
~120k tokens) and its deployment set to DEPLOYMENT below. Prints each run's prefix hit rate.

  scripts/sessions_card_check.py --infereng build/release/infereng [--trace FILE] [--seeds 1,2,3]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DEPLOYMENT = "deployment:\n  accelerator: h200\n  count: 4\n  tp: 4\n  replicas: 1\n"


def card_from(chat: str, traffic: str) -> str:
    """chat.yaml without its traffic and deployment sections, with the written traffic."""
    out, skip = [], False
    for line in chat.split("\n"):
        if re.match(r"^(traffic|deployment):", line):
            skip = True
            continue
        if skip and re.match(r"^\S", line):
            skip = False
        if not skip:
            out.append(line)
    body = "\n".join(out)
    body = re.sub(r"max_context_tokens: \d+", "max_context_tokens: 131072", body)
    body = re.sub(r"max_input_tokens: \d+", "max_input_tokens: 129024", body)
    return body + "\n" + DEPLOYMENT + traffic


def hit_rate(infereng: str, args: list) -> str:
    run = subprocess.run([infereng, "simulate"] + args, capture_output=True, text=True)
    if run.returncode not in (0, 1):  # 1: the card's SLOs failed, which is not this check's concern
        sys.exit(f"simulate {' '.join(args)} failed ({run.returncode}):\n{run.stderr}")
    m = re.search(r"prefix hit rate ([0-9.]+%)", run.stdout)
    return m.group(1) if m else "n/a"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--infereng", default=os.path.join(ROOT, "build/release/infereng"))
    ap.add_argument("--trace", default=os.path.join(ROOT, "src/trace/testdata/mooncake-conv-1000.jsonl"))
    ap.add_argument("--duration", default="3300s", help="synthetic runs: 10x the slice's 330 s, for steady figures")
    ap.add_argument("--seeds", default="1,2,3")
    a = ap.parse_args()
    chat = open(os.path.join(ROOT, "examples/chat.yaml")).read()
    with tempfile.TemporaryDirectory() as d:
        cards = {}
        for name, extra in (("requests", []), ("sessions", ["--card-sessions"])):
            section = os.path.join(d, f"{name}.traffic.yaml")
            subprocess.run([a.infereng, "characterize", a.trace, "--card-out", section] + extra, check=True,
                           capture_output=True)
            cards[name] = os.path.join(d, f"{name}.yaml")
            with open(cards[name], "w") as f:
                f.write(card_from(chat, open(section).read()))
        replay = os.path.join(d, "replay.yaml")
        with open(replay, "w") as f:  # the per-request card: the trace's own arrivals replace its traffic
            f.write(open(cards["requests"]).read())
        print(f"trace replay (its hash_ids):     {hit_rate(a.infereng, ['--card', replay, '--trace', a.trace])}")
        for name in ("requests", "sessions"):
            rates = [hit_rate(a.infereng, ["--card", cards[name], "--duration", a.duration, "--seed", s])
                     for s in a.seeds.split(",")]
            print(f"{name} card, seeds {a.seeds}: {' '.join(rates)}")


if __name__ == "__main__":
    main()
