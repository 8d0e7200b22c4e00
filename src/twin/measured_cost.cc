#include "twin/measured_cost.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "core/linear_solve.h"

namespace infereng::twin {

double InterpolateLinear(std::span<const double> x, std::span<const double> y, double at, bool* extrapolated) {
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

double PiecewiseLinear::At(double at, bool* extrapolated) const { return InterpolateLinear(x, y, at, extrapolated); }

double OccupancyTable::At(double tokens, double occupied, bool* extrapolated) const {
  if (empty()) return 0;
  // The two rows around `occupied` (the end rows outside the range), each interpolated
  // along tokens, then along occupancy: bilinear inside, end slopes outside.
  const std::size_t rows = kv_occupied.size();
  std::size_t lo = 0;
  if (rows > 1) {
    const auto it = std::upper_bound(kv_occupied.begin(), kv_occupied.end(), occupied);
    lo = std::min<std::size_t>(static_cast<std::size_t>(std::max<std::ptrdiff_t>(it - kv_occupied.begin(), 1)), rows - 1) - 1;
  }
  const std::size_t hi = std::min(lo + 1, rows - 1);
  const double x[2] = {kv_occupied[lo], kv_occupied[hi]};
  const double y[2] = {InterpolateLinear(batch_tokens, seconds[lo], tokens, extrapolated),
                       InterpolateLinear(batch_tokens, seconds[hi], tokens, extrapolated)};
  return InterpolateLinear(std::span<const double>(x, hi > lo ? 2 : 1), std::span<const double>(y, hi > lo ? 2 : 1),
                           occupied, extrapolated);
}

namespace {

Status CheckAxis(const std::vector<double>& v, const std::string& at) {
  if (v.empty()) return Status::InvalidArgument(at + ": expected a non-empty array of numbers");
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string here = at + "[" + std::to_string(i) + "]";
    if (!std::isfinite(v[i]) || v[i] < 0) return Status::InvalidArgument(here + ": must be a finite number >= 0");
    if (i > 0 && !(v[i] > v[i - 1])) {
      return Status::InvalidArgument(here + ": must be greater than the previous value (" + std::to_string(v[i - 1]) + ")");
    }
  }
  return Status::Ok();
}

}  // namespace

Status OccupancyTable::Validate(const std::string& what) const {
  INFERENG_RETURN_IF_ERROR(CheckAxis(batch_tokens, what + ".batch_tokens"));
  INFERENG_RETURN_IF_ERROR(CheckAxis(kv_occupied, what + ".kv_occupied"));
  if (seconds.size() != kv_occupied.size()) {
    return Status::InvalidArgument(what + ".seconds: expected one row per kv_occupied value (" +
                                   std::to_string(kv_occupied.size()) + "), got " + std::to_string(seconds.size()));
  }
  for (std::size_t i = 0; i < seconds.size(); ++i) {
    const std::string row = what + ".seconds[" + std::to_string(i) + "]";
    if (seconds[i].size() != batch_tokens.size()) {
      return Status::InvalidArgument(row + ": expected one value per batch_tokens value (" +
                                     std::to_string(batch_tokens.size()) + "), got " + std::to_string(seconds[i].size()));
    }
    for (std::size_t j = 0; j < seconds[i].size(); ++j) {
      if (!std::isfinite(seconds[i][j]) || seconds[i][j] < 0) {
        return Status::InvalidArgument(row + "[" + std::to_string(j) + "]: must be a finite number of seconds >= 0");
      }
    }
  }
  return Status::Ok();
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

double TableStepSeconds(const MeasuredTable& t, double n, double c, double o, bool* extrapolated) {
  if (!t.occupancy.empty()) return t.occupancy.At(n, o > 0 ? o : c + n, extrapolated);
  return t.tokens.At(n, extrapolated) + t.context.At(c, extrapolated);
}

PrefillAttentionFit FitPrefillAttention(const PiecewiseLinear& tokens) {
  PrefillAttentionFit fit;
  const std::size_t n = std::min(tokens.x.size(), tokens.y.size());
  if (n < 3) return fit;
  // Normal equations for y = a + b x + g (x^2 / 2).
  std::vector<std::vector<double>> m(3, std::vector<double>(3, 0.0));
  std::vector<double> v(3, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    const double f[3] = {1.0, tokens.x[i], 0.5 * tokens.x[i] * tokens.x[i]};
    for (int r = 0; r < 3; ++r) {
      v[r] += f[r] * tokens.y[i];
      for (int c = 0; c < 3; ++c) m[r][c] += f[r] * f[c];
    }
  }
  std::vector<double> sol;
  if (!SolveLinear(std::move(m), std::move(v), &sol)) return fit;
  if (!(sol[2] > 0) || !std::isfinite(sol[0]) || !std::isfinite(sol[1]) || !std::isfinite(sol[2])) return fit;
  fit.ok = true;
  fit.a = sol[0];
  fit.b = sol[1];
  fit.g = sol[2];
  return fit;
}

MeasuredCostModel::MeasuredCostModel(MeasuredTable table)
    : t_(std::move(table)), attention_(FitPrefillAttention(t_.tokens)) {}

double MeasuredCostModel::StepSeconds(const StepShape& s) const {
  if (s.Empty()) return 0;
  bool out = false;
  const double n = static_cast<double>(s.TotalTokens());
  if (t_.occupancy.empty() && attention_.ok && s.prefill_tokens > 0 && s.prefill_attn_pairs >= 0) {
    // Per chunk: the curve's one-prompt attention swapped for the step's own pairs.
    const double np = static_cast<double>(s.prefill_tokens);
    double t = t_.tokens.At(n, &out) + attention_.g * (s.prefill_attn_pairs - 0.5 * np * np) +
               t_.context.At(static_cast<double>(s.decode_context), &out);
    t = std::max(t, attention_.a + attention_.b * n);
    if (out) extrapolated_.fetch_add(1, std::memory_order_relaxed);
    return std::max(t, 1e-9);
  }
  if (!t_.occupancy.empty() && s.decode_seqs > 1) {
    // The grid was measured with one decoding sequence per step; the others are priced by
    // the decode-batch curve's increments, not as tokens of a prompt.
    const double per_seq = static_cast<double>(s.decode_tokens_per_seq);
    const double extra = per_seq * static_cast<double>(s.decode_seqs - 1);
    double t = TableStepSeconds(t_, n - extra, static_cast<double>(s.prefill_context + s.decode_context),
                                static_cast<double>(s.kv_occupied_tokens), &out);
    t += std::max(0.0, t_.tokens.At(per_seq * s.decode_seqs, &out) - t_.tokens.At(per_seq, &out));
    if (out) extrapolated_.fetch_add(1, std::memory_order_relaxed);
    return std::max(t, 1e-9);
  }
  const double t = TableStepSeconds(t_, n, static_cast<double>(s.prefill_context + s.decode_context),
                                    static_cast<double>(s.kv_occupied_tokens), &out);
  if (out) extrapolated_.fetch_add(1, std::memory_order_relaxed);
  return std::max(t, 1e-9);  // > 0 for a non-empty step (the engine's invariant)
}

}  // namespace infereng::twin
