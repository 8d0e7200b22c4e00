// Rng: std::mt19937_64 plus our own samplers, so a seed gives the same numbers with every
// standard library (std::*_distribution are implementation-defined). Samplers use only
// +,*,/ and log/sqrt/cos from <cmath>.
//
// Seeds for independent streams come from StreamSeed(seed, stream) (Mix64 of both) so two streams of one
// seed are uncorrelated and adding a stream never moves another.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>

#include "core/mix64.h"

namespace infereng::workload {

inline uint64_t StreamSeed(uint64_t seed, uint64_t stream) { return Mix64(Mix64(seed) ^ (stream * 0xd1b54a32d192ed03ULL)); }

class Rng {
 public:
  explicit Rng(uint64_t seed) : engine_(seed) {}

  uint64_t Bits() { return engine_(); }
  // Uniform in [0, 1).
  double Uniform() { return static_cast<double>(engine_() >> 11) * 0x1p-53; }
  // Uniform in (0, 1): safe for log().
  double OpenUniform() { return (static_cast<double>(engine_() >> 11) + 0.5) * 0x1p-53; }
  // Uniform integer in [0, n) (Lemire's multiply; bias < n/2^64, negligible).
  uint64_t Below(uint64_t n) { return static_cast<uint64_t>((static_cast<unsigned __int128>(engine_()) * n) >> 64); }
  double Exponential(double mean) { return -mean * std::log(OpenUniform()); }
  // Standard normal (Box-Muller; one draw per call, no cached spare, so draws stay aligned).
  double Normal() {
    const double u1 = OpenUniform(), u2 = Uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }
  // Gamma(shape, scale 1) by Marsaglia-Tsang; shape < 1 via the u^(1/shape) boost.
  double Gamma(double shape) {
    if (shape < 1) return Gamma(shape + 1) * std::pow(OpenUniform(), 1.0 / shape);
    const double d = shape - 1.0 / 3.0, c = 1.0 / std::sqrt(9.0 * d);
    for (;;) {
      double x = Normal(), v = 1 + c * x;
      if (v <= 0) continue;
      v = v * v * v;
      const double u = OpenUniform();
      if (std::log(u) < 0.5 * x * x + d - d * v + d * std::log(v)) return d * v;
    }
  }

 private:
  std::mt19937_64 engine_;  // fully specified by the standard: same sequence everywhere
};

}  // namespace infereng::workload
