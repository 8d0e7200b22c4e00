#include "core/numeric.h"

#include <cmath>

namespace infereng {
namespace {

// int64_t holds [-2^63, 2^63 - 1]; both bounds are exact doubles, and every double in
// [-2^63, 2^63) converts without overflow. NaN fails both comparisons.
constexpr double kMin = -0x1p63;
constexpr double kEnd = 0x1p63;

}  // namespace

std::optional<int64_t> DoubleToInt64(double d) {
  if (!(d >= kMin && d < kEnd) || std::trunc(d) != d) return std::nullopt;
  return static_cast<int64_t>(d);
}

std::optional<int64_t> RoundToInt64(double d) {
  if (!(d >= kMin && d < kEnd)) return std::nullopt;
  return DoubleToInt64(std::round(d));  // round(d) may reach 2^63 from just below it
}

std::optional<int64_t> InRange(std::optional<int64_t> v, int64_t lo, int64_t hi) {
  if (!v || *v < lo || *v > hi) return std::nullopt;
  return v;
}

}  // namespace infereng
