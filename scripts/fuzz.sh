#!/usr/bin/env bash
# Runs the libFuzzer harnesses (fuzz/<name>_fuzzer.cc, built by `make fuzz` into build/fuzz/)
# for SECONDS each, seeded with the checked-in fuzz/corpus/<name>/ and fuzz/regressions/<name>/,
# JOBS at a time, and prints one table row per harness: executions, coverage, corpus, peak
# RSS and the result. See docs/FUZZING.md.
#
#   scripts/fuzz.sh [-j JOBS] [--corpus DIR] [SECONDS] [NAME...]
#       SECONDS  per harness (default 60); NAME: sse, card, ... (default: every harness)
#       -j JOBS  harnesses run at once (default 1; `make fuzz-long` uses 2)
#       --corpus DIR  where the grown corpus lives, DIR/<name>/ (default build/fuzz/corpus;
#                keep a long run's corpus outside the checkout so it survives `make clean`)
#
# A harness FAILS when the fuzzer exits non-zero (crash, leak, hang > 10 s, out of memory)
# or when its log holds any sanitizer report ("runtime error:", "ERROR: AddressSanitizer",
# LeakSanitizer) -- a report the build let the process survive still counts. The fuzz preset
# builds with -fno-sanitize-recover=all so it does not survive; UBSAN_OPTIONS below halts a
# build that lacks it. Crash inputs go to build/fuzz/crashes/<name>/, logs to
# build/fuzz/<name>.log. Exit status: 0 all clean, 1 a harness failed, 2 bad usage or a
# fuzzer not built. FUZZ_BUILD_DIR (default build/fuzz) is where fuzzers, logs and crashes are.
set -uo pipefail
cd "$(dirname "$0")/.."

jobs=1
corpus_root=
while [[ $# -gt 0 ]]; do
  case $1 in
    -j) jobs=${2:-}; shift 2 || { echo "fuzz.sh: -j needs a number" >&2; exit 2; } ;;
    -j*) jobs=${1#-j}; shift ;;
    --corpus) corpus_root=${2:-}; shift 2 || { echo "fuzz.sh: --corpus needs a directory" >&2; exit 2; } ;;
    --corpus=*) corpus_root=${1#--corpus=}; shift ;;
    -h|--help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "fuzz.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) break ;;
  esac
done
[[ $jobs =~ ^[1-9][0-9]*$ ]] || { echo "fuzz.sh: -j: expected a positive integer, got '$jobs'" >&2; exit 2; }
seconds=${1:-60}
shift || true
[[ $seconds =~ ^[1-9][0-9]*$ ]] || { echo "fuzz.sh: SECONDS: expected a positive integer, got '$seconds'" >&2; exit 2; }

build=${FUZZ_BUILD_DIR:-build/fuzz}
corpus_root=${corpus_root:-$build/corpus}
if [[ $# -eq 0 ]]; then
  set -- $(for f in fuzz/*_fuzzer.cc; do basename "$f" _fuzzer.cc; done)
fi
names=()
for name in "$@"; do
  name=${name%_fuzzer}
  [[ -x $build/${name}_fuzzer ]] || { echo "fuzz.sh: $build/${name}_fuzzer not built (run make fuzz)" >&2; exit 2; }
  names+=("$name")
done

# ASan's quarantine (256 MB by default, plus per-thread caches) holds freed memory back to
# catch use-after-free; over hundreds of thousands of executions it reads as a climbing RSS
# (the card fuzzer reached ~1 GB) and trips libFuzzer's -rss_limit_mb. 16 MB still catches
# the use-after-frees a single input can cause. Options given by the caller win (later ones).
export ASAN_OPTIONS="quarantine_size_mb=16:thread_local_quarantine_size_kb=256:detect_leaks=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"

# The lines of a log that are sanitizer reports (empty when clean).
sanitizer_reports() {
  grep -E "runtime error:|(ERROR|WARNING): (AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer)" "$1" 2>/dev/null
}

run_one() {
  local name=$1 log=$build/$1.log
  local seeds=()
  for d in "fuzz/corpus/$name" "fuzz/regressions/$name"; do [[ -d $d ]] && seeds+=("$d"); done
  mkdir -p "$corpus_root/$name" "$build/crashes/$name"
  "$build/${name}_fuzzer" "$corpus_root/$name" "${seeds[@]}" \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$build/crashes/$name/" >"$log" 2>&1
  echo $? >"$build/$name.rc"
}

# One table cell from a log: the last match of a libFuzzer status or final-stat field.
field() { grep -oE "$2" "$1" 2>/dev/null | tail -n 1 | grep -oE '[0-9]+' | head -n 1; }

echo "fuzz.sh: ${#names[@]} harness(es), ${seconds}s each, $jobs at a time; corpus in $corpus_root/<name>/"
for name in "${names[@]}"; do
  while [[ $(jobs -rp | wc -l) -ge $jobs ]]; do wait -n; done
  rm -f "$build/$name.rc"
  echo "== $name: started $(date -u +%H:%M:%S)"
  run_one "$name" &
done
wait

failed=()
printf '\n%-14s %12s %9s %7s %7s %12s %8s  %s\n' HARNESS EXECS EXEC/S COV FT CORPUS RSS_MB RESULT
for name in "${names[@]}"; do
  log=$build/$name.log
  rc=$(cat "$build/$name.rc" 2>/dev/null || echo 1)
  reports=$(sanitizer_reports "$log" | wc -l)
  result=ok
  if [[ $rc -ne 0 || $reports -gt 0 ]]; then
    failed+=("$name")
    if [[ $reports -gt 0 ]]; then result="FAIL: $reports sanitizer report line(s)"
    elif grep -q "ERROR: libFuzzer: timeout" "$log"; then result="FAIL: hang"
    elif grep -qE "ERROR: libFuzzer: (out-of-memory|malloc limit)" "$log"; then result="FAIL: out of memory"
    else result="FAIL: exit $rc"; fi
  fi
  printf '%-14s %12s %9s %7s %7s %12s %8s  %s\n' "$name" \
    "$(field "$log" 'stat::number_of_executed_units: *[0-9]+')" \
    "$(field "$log" 'stat::average_exec_per_sec: *[0-9]+')" \
    "$(field "$log" 'cov: [0-9]+')" "$(field "$log" 'ft: [0-9]+')" \
    "$(grep -oE 'corp: [0-9]+/[0-9]+[a-zA-Z]*' "$log" | tail -n 1 | cut -d' ' -f2)" \
    "$(field "$log" 'stat::peak_rss_mb: *[0-9]+')" "$result"
done
for name in "${failed[@]}"; do
  echo
  echo "== $name: log $build/$name.log"
  { sanitizer_reports "$build/$name.log" | head -n 5; grep -E "^(==[0-9]+==|SUMMARY|artifact_prefix|Test unit written)" "$build/$name.log" | head -n 8; } | sort -u
done
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "fuzz.sh: failed: ${failed[*]} (inputs under $build/crashes/<name>/; a fixed one goes to fuzz/regressions/<name>/, see docs/FUZZING.md)" >&2
  exit 1
fi
