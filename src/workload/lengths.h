// LengthSampler: draws token lengths from a card::Distribution, rounded to whole tokens
// and clamped to [max(1, min), max] (and to `cap`, e.g. product.max_input_tokens).
//   fixed      the value
//   uniform    uniform real in [min, max], rounded
//   normal     mean + stddev * N(0,1)
//   lognormal  exp(mu + sigma N(0,1)), mu = ln p50, sigma = (ln p99 - ln p50) / z(0.99)
//   empirical  a uniformly chosen loaded sample
#pragma once

#include <cstdint>

#include "card/card.h"
#include "workload/rng.h"

namespace infereng::workload {

inline constexpr double kZ99 = 2.3263478740408408;  // standard normal 99th percentile

class LengthSampler {
 public:
  // `cap` <= 0: no cap beyond the distribution's own max. `dist` must outlive the sampler
  // only for empirical samples (they are referenced, not copied).
  LengthSampler(const card::Distribution& dist, int64_t cap);
  int32_t Sample(Rng& rng) const;
  int32_t Clamp(double v) const;

 private:
  const card::Distribution* dist_;
  double lo_, hi_;
  double mu_ = 0, sigma_ = 0;
};

}  // namespace infereng::workload
