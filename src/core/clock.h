// Clock: the time seam. Every latency in infereng is steady_clock nanoseconds.
//
// SteadyClock is the real one; FakeClock is advanced by hand in tests so schedulers and
// timeouts are deterministic. Wall-clock time (system_clock) is read once per run for
// manifests only (WallTimeIso8601), never for intervals.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

namespace infereng {

using Nanos = std::int64_t;  // steady_clock nanoseconds (or virtual nanoseconds in the twin)

inline constexpr Nanos kNanosPerMicro = 1'000;
inline constexpr Nanos kNanosPerMilli = 1'000'000;
inline constexpr Nanos kNanosPerSecond = 1'000'000'000;

inline double NanosToMillis(Nanos ns) { return static_cast<double>(ns) / 1e6; }
inline double NanosToSeconds(Nanos ns) { return static_cast<double>(ns) / 1e9; }
// Saturating: a double outside Nanos' range (about +-292 years) becomes the nearest end
// and NaN becomes 0, because the plain cast is undefined behaviour there. Callers validate
// their inputs first (a card's seconds are bounded); this keeps a missed bound defined.
inline Nanos SaturatingNanos(double ns) {
  if (!(ns == ns)) return 0;  // NaN
  if (ns >= 9.2e18) return INT64_MAX;
  if (ns <= -9.2e18) return INT64_MIN;
  return static_cast<Nanos>(ns);
}
inline Nanos SecondsToNanos(double s) { return SaturatingNanos(s * 1e9); }
inline Nanos MillisToNanos(double ms) { return SaturatingNanos(ms * 1e6); }

class Clock {
 public:
  virtual ~Clock() = default;
  virtual Nanos Now() const = 0;
  // Blocks (or, for a fake, advances) until Now() >= t.
  virtual void SleepUntil(Nanos t) = 0;
};

// std::chrono::steady_clock. SleepUntil sleeps coarsely then spins the last ~50 µs so
// pacing error stays in microseconds (the load generator relies on this).
class SteadyClock final : public Clock {
 public:
  Nanos Now() const override;
  void SleepUntil(Nanos t) override;
  static SteadyClock& Instance();
};

// A clock that moves only when told to. Thread-safe reads.
class FakeClock final : public Clock {
 public:
  explicit FakeClock(Nanos start = 0) : now_(start) {}
  Nanos Now() const override { return now_.load(std::memory_order_acquire); }
  void SleepUntil(Nanos t) override {
    Nanos cur = now_.load();
    while (cur < t && !now_.compare_exchange_weak(cur, t)) {
    }
  }
  void Advance(Nanos d) { now_.fetch_add(d); }
  void Set(Nanos t) { now_.store(t); }

 private:
  std::atomic<Nanos> now_;
};

// Wall-clock time as ISO 8601 UTC ("2026-12-01T04:00:00Z"), for manifests.
std::string WallTimeIso8601();

}  // namespace infereng
