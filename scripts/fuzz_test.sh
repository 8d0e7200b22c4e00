#!/usr/bin/env bash
# Test of scripts/fuzz.sh's verdicts and table, with fake fuzzers (shell scripts printing what
# libFuzzer and the sanitizers print) in a temporary FUZZ_BUILD_DIR: a clean run passes and its
# stats reach the table; a sanitizer report fails the run even when the fuzzer exits 0 (a build
# that recovers from UBSan), as do an ASan crash and a leak. Run by ctest as fuzz_script.verdicts.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export FUZZ_BUILD_DIR=$tmp
fails=0

fake() {  # fake NAME EXIT_CODE [REPORT_LINE]
  local report=${3:-}
  cat >"$tmp/$1_fuzzer" <<FAKE
#!/usr/bin/env bash
echo "INFO: Seed: 1"
echo "#2	INITED cov: 40 ft: 41 corp: 3/120b exec/s: 0 rss: 30Mb"
[[ -n "$report" ]] && echo "$report"
echo "#5000	DONE   cov: 77 ft: 123 corp: 9/1234b lim: 4 exec/s: 2500 rss: 44Mb"
echo "stat::number_of_executed_units: 5000"
echo "stat::average_exec_per_sec:     2500"
echo "stat::new_units_added:          6"
echo "stat::slowest_unit_time_sec:    0"
echo "stat::peak_rss_mb:              44"
exit $2
FAKE
  chmod +x "$tmp/$1_fuzzer"
}

expect() {  # expect WANT_RC NEEDLE ARGS...   (NEEDLE "re:..." is an extended regex)
  local want=$1 needle=$2
  shift 2
  local out rc
  out=$(bash "$here/fuzz.sh" "$@" 2>&1)
  rc=$?
  local found
  if [[ $needle == re:* ]]; then grep -qE -- "${needle#re:}" <<<"$out"; else grep -qF -- "$needle" <<<"$out"; fi
  found=$?
  if [[ $rc -ne $want || $found -ne 0 ]]; then
    echo "FAIL: fuzz.sh $*: rc $rc (want $want), output lacks '$needle':"
    echo "$out" | sed 's/^/    /'
    fails=$((fails + 1))
  else
    echo "ok: fuzz.sh $* -> rc $rc, '$needle'"
  fi
}

fake clean 0
fake clean2 0
fake ubsan 0 "src/serve/request_parser.cc:73:55: runtime error: 1.84467e+19 is outside the range of representable values of type 'long'"
fake asan 1 "==42==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x602000000011"
fake leak 0 "==42==ERROR: LeakSanitizer: detected memory leaks"

expect 0 "re:^clean +5000 +2500 +77 +123 +9/1234b +44 +ok$" 1 clean
expect 1 "FAIL: 1 sanitizer report line(s)" 1 ubsan
expect 1 "runtime error: 1.84467e+19" 1 ubsan
expect 1 "FAIL: 1 sanitizer report line(s)" 1 asan
expect 1 "FAIL: 1 sanitizer report line(s)" 1 leak
expect 1 "fuzz.sh: failed: ubsan" -j 2 1 clean ubsan
expect 0 "2 harness(es), 1s each, 2 at a time" -j2 --corpus "$tmp/grown" 1 clean clean2
[[ -d $tmp/grown/clean ]] || { echo "FAIL: --corpus did not create $tmp/grown/clean"; fails=$((fails + 1)); }
expect 2 "not built" 1 nonesuch
expect 2 "SECONDS: expected a positive integer" soon clean
expect 2 "-j: expected a positive integer" -j 0 1 clean

if [[ $fails -gt 0 ]]; then
  echo "fuzz_test.sh: $fails check(s) failed"
  exit 1
fi
echo "fuzz_test.sh: all checks passed"
