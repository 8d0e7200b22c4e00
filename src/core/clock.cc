#include "core/clock.h"

#include <chrono>
#include <ctime>
#include <thread>

namespace infereng {

Nanos SteadyClock::Now() const {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void SteadyClock::SleepUntil(Nanos t) {
  constexpr Nanos kSpin = 50 * kNanosPerMicro;
  Nanos now = Now();
  if (t - now > kSpin) {
    std::this_thread::sleep_for(std::chrono::nanoseconds(t - now - kSpin));
  }
  while (Now() < t) {
  }
}

SteadyClock& SteadyClock::Instance() {
  static SteadyClock clock;
  return clock;
}

std::string WallTimeIso8601() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace infereng
