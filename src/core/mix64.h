// Mix64: the splitmix64 finaliser (Steele, Lea, Flood 2014), the one integer hash every
// deterministic stream in infereng is built from: prompt words, prefix-block hashes in the twin
// and the embedded engine, router affinity, fault draws, bootstrap resampling, and the seeds of
// workload::Rng streams. Platform-independent (only 64-bit wrap-around arithmetic), so a seed
// gives the same bytes everywhere; golden outputs depend on it, so it must never change.
#pragma once

#include <cstdint>

namespace infereng {

constexpr uint64_t Mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace infereng
