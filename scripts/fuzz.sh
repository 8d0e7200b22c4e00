#!/usr/bin/env bash
# Runs the libFuzzer harnesses (fuzz/<name>_fuzzer.cc, built by `make fuzz` into build/fuzz/)
# for SECONDS each, seeded with the checked-in fuzz/corpus/<name>/ and fuzz/regressions/<name>/.
# New coverage-increasing inputs go to build/fuzz/corpus/<name>/ (not the checked-in corpus);
# a crash, leak or hang (>10 s on one input) is written to build/fuzz/crashes/<name>/ and the
# script exits non-zero after the remaining harnesses ran.
#   scripts/fuzz.sh [SECONDS] [NAME...]     default: 60 s, every harness (NAME: sse, card, ...)
set -uo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
if [[ $# -eq 0 ]]; then
  set -- $(for f in fuzz/*_fuzzer.cc; do basename "$f" _fuzzer.cc; done)
fi
failed=()
for name in "$@"; do
  name=${name%_fuzzer}
  bin=build/fuzz/${name}_fuzzer
  [[ -x $bin ]] || { echo "fuzz.sh: $bin not built (run make fuzz)" >&2; exit 2; }
  mkdir -p "build/fuzz/corpus/$name" "build/fuzz/crashes/$name"
  echo "== $name: ${seconds}s"
  if ! "$bin" "build/fuzz/corpus/$name" "fuzz/corpus/$name" "fuzz/regressions/$name" \
      -max_total_time="$seconds" -timeout=10 -print_final_stats=1 \
      -artifact_prefix="build/fuzz/crashes/$name/" 2>"build/fuzz/$name.log"; then
    failed+=("$name")
    tail -n 40 "build/fuzz/$name.log"
  else
    grep -E "^(Done|stat::number_of_executed_units|stat::peak_rss_mb)" "build/fuzz/$name.log" || tail -n 3 "build/fuzz/$name.log"
  fi
done
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "fuzz.sh: crashes in: ${failed[*]} (inputs under build/fuzz/crashes/)" >&2
  exit 1
fi
