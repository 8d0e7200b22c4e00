#!/usr/bin/env bash
# The demo: the main job on the embedded engine, from the example chat card.
set -euo pipefail
bin=${1:-build/release/infereng}
out=${2:-out/demo}
card=examples/chat.yaml
echo "== infereng card check $card"
"$bin" card check "$card" || true
echo
echo "== infereng fit --card $card"
"$bin" fit --card "$card"
