#!/usr/bin/env bash
# The demo: the whole loop on the embedded engine, from the example chat card.
#   check the card -> fit the model -> predict with the twin -> run the baseline against the
#   embedded engine (twin-driven OpenAI-compatible server) -> report.html
set -euo pipefail
bin=${1:-build/release/infereng}
out=${2:-out/demo}
card=examples/chat.yaml
# The demo's runs go into a history beside its output, not the user's ~/.local/share.
export INFERENG_HISTORY="$out/history.db"

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "infereng card check $card"
"$bin" card check "$card"

step "infereng fit --card $card"
"$bin" fit --card "$card"

step "infereng simulate --card $card --duration 5m   (the twin's prediction, virtual time)"
rc=0; "$bin" simulate --card "$card" --duration 5m || rc=$?
[[ $rc -le 1 ]] || exit "$rc"

step "infereng run $card --out $out   (baseline against the embedded engine, 30 s window)"
rm -rf "$out"
rc=0; "$bin" run "$card" --out "$out" --duration 30s --warmup 5s --trials 1 --quiet || rc=$?
if [[ $rc -gt 1 ]]; then exit "$rc"; fi
if [[ $rc -eq 1 ]]; then
  echo "(exit 1: the run worked but a check failed — the FAIL line above names it (SLOs or quality); see the report)"
fi
echo
echo "Results: $out/ (requests.jsonl, summary.json, manifest.json, predicted/)"
echo "Quality: the card's eval set (examples/evals/) rode along with the load: see the quality line"
echo "         above, or try --quality-accuracy 0.7 to watch the pass rate and the verdict move"
echo "Report:  $out/report.html   (self-contained; open it in any browser)"
