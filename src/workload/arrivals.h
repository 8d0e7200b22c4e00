// Arrival processes: the intended send times of an open-loop workload, in seconds from
// the start. Each process owns its own Rng stream; times are strictly increasing in
// seconds (in Nanos two very close arrivals can tie).
//
//   constant  gaps of exactly 1/rate
//   poisson   exponential gaps, mean 1/rate
//   gamma     gamma-distributed gaps, mean 1/rate, coefficient of variation cv
//             (cv 1 = poisson, > 1 burstier, < 1 more regular)
//   on_off    poisson at `rate` during `on`, nothing during `off`, repeating; the long-run
//             mean is rate * on / (on + off)
//   diurnal   non-homogeneous poisson, rate(t) = rate * (1 + a sin(2 pi t / period)),
//             a = (peak_to_trough - 1) / (peak_to_trough + 1), by thinning; mean = rate
// Trace replay is separate (trace.h): it carries lengths as well as times.
#pragma once

#include <cstdint>
#include <memory>

#include "card/card.h"
#include "workload/rng.h"

namespace infereng::workload {

class ArrivalProcess {
 public:
  virtual ~ArrivalProcess() = default;
  // The next arrival time in seconds (> the previous one).
  virtual double Next() = 0;
};

// `spec` must be valid (card::ValidateCard) and not a trace. `rate_scale` multiplies the rate.
std::unique_ptr<ArrivalProcess> MakeArrivalProcess(const card::ArrivalSpec& spec, double rate_scale, uint64_t seed);

// The long-run mean rate (requests/s) of a synthetic process after scaling.
double MeanArrivalRate(const card::ArrivalSpec& spec, double rate_scale);

}  // namespace infereng::workload
