#!/usr/bin/env python3
"""Converts GSM8K (openai/grade-school-math, MIT) to an infereng eval set.

Usage: scripts/gsm8k_to_eval.py test.jsonl N > examples/evals/gsm8k-test-200.jsonl

Each GSM8K line {"question", "answer"} becomes
  {"prompt": <question + answer-format instruction>, "max_tokens": 256,
   "check": {"type": "number", "value": <the number after "####">},
   "answer": <the reference solution without the <<calculator>> annotations>, "source": ...}
The first N lines are kept, in the file's order (no sampling: reproducible by hand).
"""
import json
import re
import sys

INSTRUCTION = "\nSolve the problem step by step. End with a line of the form \"#### <number>\"."


def main() -> int:
    path, n = sys.argv[1], int(sys.argv[2])
    with open(path, encoding="utf-8") as f:
        for i, line in enumerate(f):
            if i >= n:
                break
            item = json.loads(line)
            final = item["answer"].rsplit("####", 1)[1].strip().replace(",", "")
            float(final)  # a number, or fail loudly
            solution = re.sub(r"<<[^>]*>>", "", item["answer"])
            out = {
                "prompt": item["question"] + INSTRUCTION,
                "max_tokens": 256,
                "check": {"type": "number", "value": final},
                "answer": solution,
                "source": f"gsm8k test.jsonl line {i + 1}",
            }
            print(json.dumps(out, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
