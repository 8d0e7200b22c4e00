#!/usr/bin/env python3
"""When does a llama-server form its next batch? (docs/FIDELITY.md (b6))

Usage: batch_window_probe.py MODE DELAYS_MS [ROUNDS] [--port 8091]
  MODE mid: stream C decodes; stream A (started 150 ms later) decodes too; B (a fresh 60-word
            prompt, 1 token) is sent DELAY ms after A's 30th token reached us.
  MODE end: the same, but A asks for 40 tokens and B is sent DELAY ms after A's stream ended.
For each round it prints C's inter-token gaps from the step running when the trigger came:
B's prefill shows as one long gap, and "+k" says in which step it landed (+0: the step
already running when the trigger arrived, so it was formed after it; +1: the next one).

A raw-socket client, to keep our own reaction time small (~0.3 ms here). Talks only to
127.0.0.1. Prompts are random words, so no prompt cache shortens B's prefill.
"""
import argparse
import json
import random
import re
import selectors
import socket
import statistics
import time

WORDS = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'fox', 'golf', 'hotel', 'india', 'juliet', 'kilo', 'lima',
         'mike', 'nova', 'oscar', 'papa']


def request(body):
    b = json.dumps(body).encode()
    head = f"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {len(b)}\r\n\r\n"
    return head.encode() + b


def connect(port):
    s = socket.create_connection(('127.0.0.1', port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    s.setblocking(False)
    return s


def one_round(mode, delay_ms, port, rng):
    def text(n):
        return ' '.join(rng.choice(WORDS) for _ in range(n))
    sel = selectors.DefaultSelector()
    c = connect(port)
    c.sendall(request({"prompt": text(8), "max_tokens": 300, "stream": True, "ignore_eos": True}))
    sel.register(c, selectors.EVENT_READ, 'c')
    time.sleep(0.15)
    a = connect(port)
    a.sendall(request({"prompt": text(8), "max_tokens": 200 if mode == 'mid' else 40, "stream": True, "ignore_eos": True}))
    sel.register(a, selectors.EVENT_READ, 'a')
    b = connect(port)
    b_request = request({"prompt": text(60), "max_tokens": 1})
    c_times, a_events, sent, k = [], 0, None, 0
    while True:
        events = sel.select(2.0)
        if not events:
            break
        done = False
        for key, _ in events:
            data = key.fileobj.recv(65536)
            now = time.perf_counter()
            if key.data == 'c':
                c_times += [now] * data.count(b'data: {')
                done = not data or (sent is not None and now - sent > 0.6)
            else:
                a_events += data.count(b'data: {')
                fire = (mode == 'mid' and a_events >= 30) or (mode == 'end' and b'[DONE]' in data)
                if fire and sent is None:
                    t0 = time.perf_counter()
                    while time.perf_counter() - t0 < delay_ms / 1000:
                        pass
                    b.sendall(b_request)
                    sent = time.perf_counter()
                    k = sum(1 for x in c_times if x <= t0)
                if not data:
                    sel.unregister(a)
        if done:
            break
    b.setblocking(True)
    answer = b.recv(65536)
    for s in (a, b, c):
        s.close()
    gaps = [(c_times[i + 1] - c_times[i]) * 1000 for i in range(len(c_times) - 1)]
    base = statistics.median(gaps)
    g = gaps[max(0, k - 1):k + 10]
    landed = next((i for i, x in enumerate(g) if x > 4 * base), None)
    m = re.search(rb'"prompt_n":(\d+)', answer)
    return (f"{mode} d={delay_ms:4.1f} ms  C step {base:.2f} ms  gaps: {' '.join(f'{x:.1f}' for x in g)}"
            f"  -> B's prefill in step +{landed}  (B prompt_n {m.group(1).decode() if m else '?'})")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('mode', choices=['mid', 'end'])
    ap.add_argument('delays_ms', help='comma-separated, e.g. 0,2,6')
    ap.add_argument('rounds', nargs='?', type=int, default=2)
    ap.add_argument('--port', type=int, default=8091)
    args = ap.parse_args()
    rng = random.Random()
    for _ in range(args.rounds):
        for d in (float(x) for x in args.delays_ms.split(',')):
            print(one_round(args.mode, d, args.port, rng), flush=True)
            time.sleep(0.5)


if __name__ == '__main__':
    main()
