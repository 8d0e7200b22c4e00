// Length sampling (see lengths.h).
#include "workload/lengths.h"

#include <algorithm>
#include <cmath>

namespace infereng::workload {

LengthSampler::LengthSampler(const card::Distribution& dist, int64_t cap) : dist_(&dist) {
  using K = card::Distribution::Kind;
  lo_ = std::max(1.0, dist.min);
  hi_ = dist.max > 0 ? dist.max : 1e8;
  if (cap > 0) hi_ = std::min(hi_, static_cast<double>(cap));
  hi_ = std::min(hi_, 2.0e9);  // int32
  if (hi_ < lo_) hi_ = lo_;
  if (dist.kind == K::kLognormal && dist.p50 > 0) {
    mu_ = std::log(dist.p50);
    sigma_ = dist.p99 > dist.p50 ? (std::log(dist.p99) - mu_) / kZ99 : 0;
  }
}

int32_t LengthSampler::Clamp(double v) const {
  if (!std::isfinite(v)) v = lo_;
  return static_cast<int32_t>(std::llround(std::clamp(std::round(v), lo_, hi_)));
}

int32_t LengthSampler::Sample(Rng& rng) const {
  using K = card::Distribution::Kind;
  const card::Distribution& d = *dist_;
  switch (d.kind) {
    case K::kFixed: return Clamp(d.value);
    case K::kUniform: return Clamp(d.min + (d.max - d.min) * rng.Uniform());
    case K::kNormal: return Clamp(d.mean + d.stddev * rng.Normal());
    case K::kLognormal: return Clamp(std::exp(mu_ + sigma_ * rng.Normal()));
    case K::kEmpirical:
      if (d.samples.empty()) return Clamp(lo_);
      return Clamp(d.samples[rng.Below(d.samples.size())]);
  }
  return Clamp(lo_);
}

}  // namespace infereng::workload
