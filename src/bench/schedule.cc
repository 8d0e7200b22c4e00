#include "bench/schedule.h"

namespace infereng::bench {

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
