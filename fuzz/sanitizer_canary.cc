// The sanitizer canary: a harness with two deliberately planted bugs of the kinds the
// sanitizer builds must halt on -- a float-to-integer cast overflow (GCC's -fsanitize=undefined
// leaves float-cast-overflow out; the asan preset adds it) and a signed integer overflow.
// Built only where the flags carry -fsanitize=...undefined (asan and fuzz presets):
//   - sanitizer_canary_replay (with replay_main.cc): ctest runs it on fuzz/canary/float-cast
//     and fuzz/canary/signed-overflow and passes only when UBSan reports the bug AND the run
//     stops there (the replay's closing "ran without a crash" line must not appear), and on
//     fuzz/canary/clean, which must pass -- so a build that prints and carries on fails ctest;
//   - sanitizer_canary_fuzzer (fuzz preset): `scripts/fuzz.sh 10 sanitizer_canary` must fail.
// Never linked into anything else. Input: the first byte picks the bug ('F' float cast,
// 'S' signed overflow); any other input is clean.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <limits>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  // Values depend on the input so the compiler cannot fold (or drop) the bad operation.
  const auto extra = static_cast<int64_t>(size);
  if (data[0] == 'F') {
    volatile double huge = 1.8446744073709552e19 * static_cast<double>(extra);  // >= 2^64
    const auto v = static_cast<int64_t>(huge);  // planted: float-cast-overflow
    std::fprintf(stderr, "canary: float cast gave %lld\n", static_cast<long long>(v));
  } else if (data[0] == 'S') {
    volatile int64_t big = std::numeric_limits<int64_t>::max();
    const int64_t v = big + extra;  // planted: signed-integer-overflow
    std::fprintf(stderr, "canary: signed sum gave %lld\n", static_cast<long long>(v));
  }
  return 0;
}
