#include "twin/measured_cost.h"

#include <algorithm>
#include <cmath>

namespace infereng::twin {

double PiecewiseLinear::At(double at, bool* extrapolated) const {
  if (x.empty()) return 0;
  if (x.size() == 1) {
    if (extrapolated && at != x.front()) *extrapolated = true;
    return y.front();
  }
  const std::size_t n = x.size();
  if (at < x.front() || at > x.back()) {
    if (extrapolated) *extrapolated = true;
    // The end segment's slope, clamped at >= 0 so the curve never falls outside the range.
    const bool low = at < x.front();
    const std::size_t i = low ? 0 : n - 2;
    const double slope = std::max(0.0, (y[i + 1] - y[i]) / (x[i + 1] - x[i]));
    return low ? std::max(0.0, y.front() - slope * (x.front() - at)) : y.back() + slope * (at - x.back());
  }
  const auto it = std::upper_bound(x.begin(), x.end(), at);
  const std::size_t hi = std::min<std::size_t>(static_cast<std::size_t>(it - x.begin()), n - 1);
  const std::size_t lo = hi - 1;
  const double f = (at - x[lo]) / (x[hi] - x[lo]);
  return y[lo] + f * (y[hi] - y[lo]);
}

Status PiecewiseLinear::Validate(const std::string& what) const {
  if (x.empty() || x.size() != y.size()) return Status::InvalidArgument(what + ": expected at least one [x, seconds] point");
  for (std::size_t i = 0; i < x.size(); ++i) {
    const std::string at = what + "[" + std::to_string(i) + "]";
    if (!std::isfinite(x[i]) || !std::isfinite(y[i])) return Status::InvalidArgument(at + ": not a finite number");
    if (x[i] < 0 || y[i] < 0) return Status::InvalidArgument(at + ": must be >= 0");
    if (i > 0 && !(x[i] > x[i - 1])) {
      return Status::InvalidArgument(at + ": x must be greater than the previous point's (" +
                                     std::to_string(x[i - 1]) + ")");
    }
  }
  return Status::Ok();
}

double MeasuredCostModel::StepSeconds(const StepShape& s) const {
  if (s.Empty()) return 0;
  bool out = false;
  const double n = static_cast<double>(s.TotalTokens());
  const double c = static_cast<double>(s.prefill_context + s.decode_context);
  const double t = t_.tokens.At(n, &out) + t_.context.At(c, &out);
  if (out) extrapolated_.fetch_add(1, std::memory_order_relaxed);
  return std::max(t, 1e-9);  // > 0 for a non-empty step (the engine's invariant)
}

}  // namespace infereng::twin
