#!/usr/bin/env bash
# heldout_runs.sh: the measured side of a calibrate-then-predict check against a live engine
# (docs/FIDELITY.md, issue 13's "after calibrate on a real engine" goal), in one command.
#
#   scripts/heldout_runs.sh URL CARD OUT [INFERENG]
#
# 1. `infereng profile` of the engine              -> OUT/profile.json
# 2. a closed-loop saturation run (SAT_CONCURRENCY) -> OUT/sat; its requests/s is the capacity C
# 3. the calibration run at CAL_FRACTION x C        -> OUT/cal
# 4. held-out runs at each of FRACTIONS x C         -> OUT/rate-<fraction>  (light, moderate,
#    knee and overload by default: none of them is used to calibrate)
# Every run is an ordinary `infereng bench` directory; the rates are Poisson arrivals at the
# card's lengths. Predicting them is done afterwards, anywhere, from the files alone:
#   infereng calibrate OUT/profile.json OUT/cal --card CARD --out OUT/calibrated.json
#   python3 scripts/fidelity_heldout.py --card CARD --profile OUT/calibrated.json OUT/rate-*
#
# Environment (defaults in brackets): SAT_CONCURRENCY [8], SAT_S [20], RUN_S [30], WARM_S [3],
# MIN_REQUESTS [40]: a run lasts RUN_S or long enough to send this many requests at its rate,
# whichever is longer (a P50 of ~10 requests is decided by one or two: FIDELITY.md (b5)),
# CAL_FRACTION [0.5], FRACTIONS ["0.2 0.5 0.85 1.3"], PROFILE_ARGS [--budget 90s --repeats 5
# --decode-tokens 48 --max-batch 8 --max-prompt 400]. Each step is bounded by `timeout`.
set -euo pipefail
if [ $# -lt 3 ]; then
  sed -n '2,21p' "$0" >&2
  exit 2
fi
URL=$1 CARD=$2 OUT=$3 IE=${4:-build/release/infereng}
SAT_CONCURRENCY=${SAT_CONCURRENCY:-8} SAT_S=${SAT_S:-20} RUN_S=${RUN_S:-30} WARM_S=${WARM_S:-3}
MIN_REQUESTS=${MIN_REQUESTS:-40}
CAL_FRACTION=${CAL_FRACTION:-0.5} FRACTIONS=${FRACTIONS:-"0.2 0.5 0.85 1.3"}
PROFILE_ARGS=${PROFILE_ARGS:-"--budget 90s --repeats 5 --decode-tokens 48 --max-batch 8 --max-prompt 400"}
mkdir -p "$OUT"
say() { echo "[heldout_runs $(date -u +%H:%M:%S)] $*"; }
bench() {  # bench NAME ARGS...: one bench run, bounded by its --duration Ns plus a margin
  local name=$1 run_s=$SAT_S prev=""
  shift
  for a in "$@"; do
    [ "$prev" = --duration ] && run_s=${a%s}
    prev=$a
  done
  say "bench $name: $*"
  timeout $((run_s + WARM_S + 90)) "$IE" bench --target "$URL" --card "$CARD" --warmup "${WARM_S}s" \
    --out "$OUT/$name" "$@" 2>&1 | tail -3 || say "bench $name: exit status $? (an SLO miss is expected in overload; the run's files stay)"
}

say "profile: $PROFILE_ARGS"
# shellcheck disable=SC2086
timeout 300 "$IE" profile --target "$URL" $PROFILE_ARGS --out "$OUT/profile.json" 2>&1 | tee "$OUT/profile.txt" | tail -4 ||
  say "profile: exit status $?"
bench sat --concurrency "$SAT_CONCURRENCY" --duration "${SAT_S}s"
C=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["requests_per_s"])' "$OUT/sat/summary.json")
say "capacity at concurrency $SAT_CONCURRENCY: $C requests/s"
rate() { python3 -c 'import sys; print(f"{float(sys.argv[1]) * float(sys.argv[2]):.3f}")' "$1" "$C"; }
# Seconds for a run at rate R: RUN_S, or MIN_REQUESTS / R when that is longer.
secs() { python3 -c 'import math, sys; print(max(int(sys.argv[2]), math.ceil(int(sys.argv[3]) / float(sys.argv[1]))))' "$1" "$RUN_S" "$MIN_REQUESTS"; }
R=$(rate "$CAL_FRACTION")
bench cal --rate "$R" --duration "$(secs "$R")s"
for f in $FRACTIONS; do
  R=$(rate "$f")
  bench "rate-$f" --rate "$R" --duration "$(secs "$R")s"
done
say "done: $OUT"
