#include "core/stats.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace infereng::stats {

double SampleStats::AtStandardPercentile(double p) const {
  if (count == 0) return 0;
  if (p == 50) return p50;
  if (p == 90) return p90;
  if (p == 95) return p95;
  if (p == 99) return p99;
  if (p == 99.9) return p99_9;
  return 0;
}

namespace {

// numpy "linear": the virtual index (n - 1) * q, split into the rank below it and the
// fraction of the way to the next rank. n > 0.
struct Rank {
  size_t lo;
  double frac;
};
Rank RankOf(size_t n, double p) {
  p = std::clamp(p, 0.0, 100.0);
  const double rank = p / 100.0 * static_cast<double>(n - 1);
  const double lo_rank = std::floor(rank);
  return {static_cast<size_t>(lo_rank), rank - lo_rank};
}

// numpy's _lerp form, exact at both ends and monotone.
double Lerp(double a, double b, double frac) {
  const double diff = b - a;
  return frac >= 0.5 ? b - diff * (1 - frac) : a + diff * frac;
}

}  // namespace

double PercentileSorted(std::span<const double> sorted, double p) {
  if (sorted.empty()) return 0;
  const Rank r = RankOf(sorted.size(), p);
  const size_t hi = std::min(r.lo + 1, sorted.size() - 1);
  return Lerp(sorted[r.lo], sorted[hi], r.frac);
}

double PercentileInPlace(std::vector<double>& values, double p) {
  std::sort(values.begin(), values.end());
  return PercentileSorted(values, p);
}

double PercentileSelect(std::vector<double>& values, double p) {
  if (values.empty()) return 0;
  const Rank r = RankOf(values.size(), p);
  auto nth = values.begin() + static_cast<std::ptrdiff_t>(r.lo);
  std::nth_element(values.begin(), nth, values.end());
  const double a = *nth;
  if (r.lo + 1 >= values.size() || r.frac == 0) return a;
  return Lerp(a, *std::min_element(nth + 1, values.end()), r.frac);
}

double PercentileOf(std::span<const double> values, double p) {
  if (values.empty()) return 0;
  const Rank r = RankOf(values.size(), p);
  const size_t keep = values.size() - r.lo;  // ranks lo .. n-1
  if (keep > kTopTail) {
    std::vector<double> copy(values.begin(), values.end());
    return PercentileSelect(copy, p);
  }
  // top[0..k) holds the k largest values seen so far, ascending.
  std::array<double, kTopTail> top;
  size_t k = 0;
  for (const double v : values) {
    if (k == keep) {
      if (!(v > top[0])) continue;
      size_t i = 1;  // drop top[0], insert v in order
      for (; i < k && top[i] < v; ++i) top[i - 1] = top[i];
      top[i - 1] = v;
    } else {
      size_t i = k++;
      for (; i > 0 && top[i - 1] > v; --i) top[i] = top[i - 1];
      top[i] = v;
    }
  }
  // top[0] is the value at rank lo and top[1] the one at rank lo + 1, as PercentileSelect's
  // nth_element and the minimum above it find them.
  if (r.lo + 1 >= values.size() || r.frac == 0) return top[0];
  return Lerp(top[0], top[1], r.frac);
}

SampleStats SummarizeInPlace(std::vector<double>& values) {
  SampleStats s;
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  s.count = static_cast<int64_t>(values.size());
  s.min = values.front();
  s.max = values.back();
  double sum = 0;
  for (double v : values) sum += v;
  s.mean = sum / static_cast<double>(values.size());
  double ss = 0;
  for (double v : values) ss += (v - s.mean) * (v - s.mean);
  s.stddev = std::sqrt(ss / static_cast<double>(values.size()));
  s.p50 = PercentileSorted(values, 50);
  s.p90 = PercentileSorted(values, 90);
  s.p95 = PercentileSorted(values, 95);
  s.p99 = PercentileSorted(values, 99);
  s.p99_9 = PercentileSorted(values, 99.9);
  return s;
}

double StudentT975(int64_t df) {
  // t_{0.975, df} for df = 1..30 (standard tables, 4 decimals).
  static constexpr std::array<double, 30> kTable = {
      12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646, 2.3060, 2.2622, 2.2281,
      2.2010,  2.1788, 2.1604, 2.1448, 2.1314, 2.1199, 2.1098, 2.1009, 2.0930, 2.0860,
      2.0796,  2.0739, 2.0687, 2.0639, 2.0595, 2.0555, 2.0518, 2.0484, 2.0452, 2.0423};
  if (df <= 0) return 0;
  if (df <= 30) return kTable[static_cast<size_t>(df - 1)];
  // Cornish-Fisher expansion around the normal quantile z = 1.959964.
  const double z = 1.959963984540054;
  const double n = static_cast<double>(df);
  const double z3 = z * z * z, z5 = z3 * z * z, z7 = z5 * z * z, z9 = z7 * z * z;
  return z + (z3 + z) / (4 * n) + (5 * z5 + 16 * z3 + 3 * z) / (96 * n * n) +
         (3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / (384 * n * n * n) +
         (79 * z9 + 776 * z7 + 1482 * z5 - 1920 * z3 - 945 * z) / (92160 * n * n * n * n);
}

MeanCi MeanConfidence95(std::span<const double> values) {
  MeanCi ci;
  ci.n = static_cast<int64_t>(values.size());
  if (values.empty()) return ci;
  double sum = 0;
  for (double v : values) sum += v;
  ci.mean = sum / static_cast<double>(values.size());
  ci.low = ci.high = ci.mean;
  if (values.size() < 2) return ci;
  double ss = 0;
  for (double v : values) ss += (v - ci.mean) * (v - ci.mean);
  ci.stddev = std::sqrt(ss / static_cast<double>(values.size() - 1));
  ci.half_width = StudentT975(ci.n - 1) * ci.stddev / std::sqrt(static_cast<double>(ci.n));
  ci.low = ci.mean - ci.half_width;
  ci.high = ci.mean + ci.half_width;
  ci.defined = true;
  return ci;
}

}  // namespace infereng::stats
