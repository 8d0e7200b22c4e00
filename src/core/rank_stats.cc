#include "core/rank_stats.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

namespace infereng::stats {

double NormalCdf(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }

double NormalQuantile(double p) {
  if (p <= 0) return -INFINITY;
  if (p >= 1) return INFINITY;
  // Bisection on the CDF: 200 halvings of [-40, 40] are far below double precision, and
  // this is called a handful of times per probe.
  double lo = -40, hi = 40;
  for (int i = 0; i < 200 && hi - lo > 1e-12; ++i) {
    const double mid = 0.5 * (lo + hi);
    (NormalCdf(mid) < p ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

SignedRankResult WilcoxonSignedRank(std::span<const double> d) {
  SignedRankResult r;
  std::vector<double> mag;
  for (double v : d) {
    if (v == 0 || !std::isfinite(v)) continue;
    mag.push_back(std::fabs(v));
  }
  r.n = static_cast<int64_t>(mag.size());
  if (r.n == 0) return r;
  std::vector<std::size_t> order(mag.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return mag[a] < mag[b]; });
  std::vector<double> rank(mag.size());
  double tie_term = 0;
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i;
    while (j + 1 < order.size() && mag[order[j + 1]] == mag[order[i]]) ++j;
    const double avg = 0.5 * static_cast<double>(i + j) + 1;
    for (std::size_t k = i; k <= j; ++k) rank[order[k]] = avg;
    const double t = static_cast<double>(j - i + 1);
    tie_term += t * t * t - t;
    i = j + 1;
  }
  std::size_t m = 0;
  for (double v : d) {
    if (v == 0 || !std::isfinite(v)) continue;
    if (v > 0) r.w_plus += rank[m];
    ++m;
  }
  const double n = static_cast<double>(r.n);
  const double mean = n * (n + 1) / 4;
  const double var = n * (n + 1) * (2 * n + 1) / 24 - tie_term / 48;
  if (var <= 0) return r;
  const double diff = r.w_plus - mean;
  const double corrected = diff > 0 ? std::max(0.0, diff - 0.5) : std::min(0.0, diff + 0.5);
  r.z = corrected / std::sqrt(var);
  r.p_value = std::min(1.0, 2 * (1 - NormalCdf(std::fabs(r.z))));
  return r;
}

RankTestResult MannWhitneyLess(std::span<const double> x, std::span<const double> y) {
  RankTestResult r;
  r.n_x = static_cast<int64_t>(x.size());
  r.n_y = static_cast<int64_t>(y.size());
  if (x.empty() || y.empty()) return r;
  // Pool, sort, average ranks over ties; remember the tie groups for the variance.
  std::vector<std::pair<double, bool>> all;  // value, from X
  all.reserve(x.size() + y.size());
  for (double v : x) all.emplace_back(v, true);
  for (double v : y) all.emplace_back(v, false);
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  const double n = static_cast<double>(all.size());
  double rank_sum_x = 0, tie_term = 0;
  for (std::size_t i = 0; i < all.size();) {
    std::size_t j = i;
    while (j < all.size() && all[j].first == all[i].first) ++j;
    const double avg_rank = 0.5 * static_cast<double>(i + 1 + j);  // ranks i+1 .. j
    for (std::size_t k = i; k < j; ++k) {
      if (all[k].second) rank_sum_x += avg_rank;
    }
    const double t = static_cast<double>(j - i);
    tie_term += t * t * t - t;
    i = j;
  }
  const double nx = static_cast<double>(r.n_x), ny = static_cast<double>(r.n_y);
  // U counting pairs with x > y; the pairs with x < y are the rest.
  const double u_greater = rank_sum_x - nx * (nx + 1) / 2;
  r.u = nx * ny - u_greater;
  r.superiority = r.u / (nx * ny);
  const double mean = nx * ny / 2;
  const double var = nx * ny / 12 * ((n + 1) - tie_term / (n * (n - 1)));
  if (var <= 0) return r;  // every value equal: no evidence either way
  const double diff = r.u - mean;
  const double corrected = diff > 0 ? std::max(0.0, diff - 0.5) : diff;
  r.z = corrected / std::sqrt(var);
  r.p_value = 1 - NormalCdf(r.z);
  return r;
}

double MannWhitneyPower(int64_t n_x, int64_t n_y, double effect, double alpha) {
  if (n_x <= 0 || n_y <= 0) return 0;
  const double nx = static_cast<double>(n_x), ny = static_cast<double>(n_y);
  const double sd0 = std::sqrt(nx * ny * (nx + ny + 1) / 12);
  const double shift = nx * ny * (effect - 0.5);
  return NormalCdf(shift / sd0 - NormalQuantile(1 - alpha));
}

}  // namespace infereng::stats
