#include "bench/schedule.h"

#include <algorithm>
#include <cmath>

namespace infereng::bench {

Nanos RampedOffset(Nanos arrival_offset, Nanos ramp) {
  if (ramp <= 0 || arrival_offset <= 0) return std::max<Nanos>(arrival_offset, 0);
  const double a = static_cast<double>(arrival_offset);
  const double r = static_cast<double>(ramp);
  if (a < r / 2) return static_cast<Nanos>(std::sqrt(2 * r * a));
  return arrival_offset + ramp / 2;
}

int RampedConcurrency(int target, Nanos elapsed, Nanos ramp) {
  if (ramp <= 0 || elapsed >= ramp) return target;
  if (elapsed <= 0) return 1;
  const double frac = static_cast<double>(elapsed) / static_cast<double>(ramp);
  return std::clamp(static_cast<int>(std::ceil(frac * target)), 1, target);
}

bool PaceUntil(Clock& clock, Nanos t, const std::atomic<bool>& stop) {
  constexpr Nanos kSlice = 10 * kNanosPerMilli;
  for (;;) {
    if (stop.load(std::memory_order_relaxed)) return false;
    const Nanos now = clock.Now();
    if (now >= t) return true;
    if (t - now <= kSlice) {
      clock.SleepUntil(t);
      return !stop.load(std::memory_order_relaxed);
    }
    clock.SleepUntil(now + kSlice);
  }
}

}  // namespace infereng::bench
