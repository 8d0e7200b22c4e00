// Synthetic arrival processes (see arrivals.h for their definitions).
#include "workload/arrivals.h"

#include <algorithm>
#include <cmath>

namespace infereng::workload {
namespace {

constexpr double kTwoPi = 6.283185307179586;

class Constant final : public ArrivalProcess {
 public:
  explicit Constant(double rate) : gap_(1.0 / rate) {}
  // n * gap rather than a running sum: no drift over millions of arrivals.
  double Next() override { return static_cast<double>(++n_) * gap_; }

 private:
  double gap_;
  uint64_t n_ = 0;
};

class Poisson final : public ArrivalProcess {
 public:
  Poisson(double rate, uint64_t seed) : mean_gap_(1.0 / rate), rng_(seed) {}
  double Next() override { return t_ += rng_.Exponential(mean_gap_); }

 private:
  double mean_gap_;
  Rng rng_;
  double t_ = 0;
};

class Gamma final : public ArrivalProcess {
 public:
  Gamma(double rate, double cv, uint64_t seed) : shape_(1.0 / (cv * cv)), scale_(1.0 / rate / shape_), rng_(seed) {}
  double Next() override {
    // A gap can underflow to 0 for tiny shapes; keep times strictly increasing.
    const double gap = rng_.Gamma(shape_) * scale_;
    t_ = std::max(t_ + gap, std::nextafter(t_, 1e300));
    return t_;
  }

 private:
  double shape_, scale_;
  Rng rng_;
  double t_ = 0;
};

class OnOff final : public ArrivalProcess {
 public:
  OnOff(double rate, double on_s, double off_s, uint64_t seed)
      : mean_gap_(1.0 / rate), on_(on_s), cycle_(on_s + off_s), rng_(seed) {}
  double Next() override {
    // Exponential gaps are memoryless: the part of a gap that runs past the end of an
    // `on` window carries over into the next window.
    double gap = rng_.Exponential(mean_gap_);
    for (;;) {
      const double window_end = static_cast<double>(cycle_index_) * cycle_ + on_;
      if (t_ + gap < window_end) return t_ += gap;
      gap -= window_end - t_;
      ++cycle_index_;
      t_ = static_cast<double>(cycle_index_) * cycle_;
    }
  }

 private:
  double mean_gap_, on_, cycle_;
  Rng rng_;
  double t_ = 0;
  uint64_t cycle_index_ = 0;
};

class Diurnal final : public ArrivalProcess {
 public:
  Diurnal(double rate, double period_s, double peak_to_trough, uint64_t seed)
      : rate_(rate), period_(period_s), amp_((peak_to_trough - 1) / (peak_to_trough + 1)), rng_(seed) {}
  double Next() override {
    const double max_rate = rate_ * (1 + amp_);
    for (;;) {
      t_ += rng_.Exponential(1.0 / max_rate);
      const double rate_now = rate_ * (1 + amp_ * std::sin(kTwoPi * t_ / period_));
      if (rng_.Uniform() * max_rate < rate_now) return t_;
    }
  }

 private:
  double rate_, period_, amp_;
  Rng rng_;
  double t_ = 0;
};

}  // namespace

std::unique_ptr<ArrivalProcess> MakeArrivalProcess(const card::ArrivalSpec& spec, double rate_scale, uint64_t seed) {
  using K = card::ArrivalSpec::Kind;
  const double rate = spec.rate_rps * rate_scale;
  switch (spec.kind) {
    case K::kConstant: return std::make_unique<Constant>(rate);
    case K::kGamma: return std::make_unique<Gamma>(rate, spec.cv, seed);
    case K::kOnOff: return std::make_unique<OnOff>(rate, spec.on_s, spec.off_s, seed);
    case K::kDiurnal: return std::make_unique<Diurnal>(rate, spec.period_s, spec.peak_to_trough, seed);
    case K::kPoisson:
    case K::kTrace: break;
  }
  return std::make_unique<Poisson>(rate, seed);
}

double MeanArrivalRate(const card::ArrivalSpec& spec, double rate_scale) {
  const double rate = spec.rate_rps * rate_scale;
  if (spec.kind == card::ArrivalSpec::Kind::kOnOff) return rate * spec.on_s / (spec.on_s + spec.off_s);
  return rate;
}

}  // namespace infereng::workload
