// Bootstrap of per-request statistics (see bootstrap.h for the method and its bounds).
#include "metrics/bootstrap.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/mix64.h"
#include "core/stats.h"

namespace infereng::metrics {
namespace {

// splitmix64: tiny, fast, and the same sequence on every platform and standard library.
struct SplitMix64 {
  uint64_t state;
  uint64_t Next() {
    const uint64_t z = Mix64(state);  // == splitmix64's next(): advance by the golden gamma, mix
    state += 0x9e3779b97f4a7c15ULL;
    return z;
  }
  // Uniform in [0, n) by multiply-shift (bias < n / 2^64: irrelevant here).
  uint64_t Below(uint64_t n) { return static_cast<uint64_t>((static_cast<unsigned __int128>(Next()) * n) >> 64); }
};

// Every statistic of `buf` (reordered). Percentiles are taken in ascending order, each
// selection working on the part right of the previous rank: about 2n comparisons per
// percentile instead of a sort.
void EvaluateAll(std::vector<double>& buf, double sum, std::span<const Statistic> stats,
                 std::span<const std::size_t> order, std::vector<double>& out) {
  const std::size_t n = buf.size();
  std::size_t done = 0;  // buf[0, done) holds the `done` smallest values, in no order
  for (std::size_t idx : order) {
    const Statistic& s = stats[idx];
    if (s.kind == Statistic::Kind::kMean) {
      out[idx] = n ? sum / static_cast<double>(n) : 0;
      continue;
    }
    if (n == 0) {
      out[idx] = 0;
      continue;
    }
    const double rank = std::clamp(s.p, 0.0, 100.0) / 100.0 * static_cast<double>(n - 1);
    const auto lo = static_cast<std::size_t>(std::floor(rank));
    const double frac = rank - static_cast<double>(lo);
    const std::size_t from = std::min(done, lo);
    std::nth_element(buf.begin() + static_cast<std::ptrdiff_t>(from), buf.begin() + static_cast<std::ptrdiff_t>(lo),
                     buf.end());
    double v = buf[lo];
    if (frac > 0 && lo + 1 < n) {
      const double next = *std::min_element(buf.begin() + static_cast<std::ptrdiff_t>(lo + 1), buf.end());
      v += frac * (next - v);
    }
    out[idx] = v;
    done = lo + 1;
  }
}

// Percentile q (0..1) of `v` (sorted in place), numpy linear.
double Quantile(std::vector<double>& v, double q) {
  std::sort(v.begin(), v.end());
  return stats::PercentileSorted(v, q * 100);
}

}  // namespace

UnitSample UnitSample::OnePerUnit(std::span<const double> values) {
  UnitSample s;
  s.values_.assign(values.begin(), values.end());
  s.offsets_.resize(values.size() + 1);
  for (std::size_t i = 0; i <= values.size(); ++i) s.offsets_[i] = i;
  return s;
}

void UnitSample::AddUnit(std::span<const double> values) {
  if (values.empty()) return;
  values_.insert(values_.end(), values.begin(), values.end());
  offsets_.push_back(values_.size());
}

double Evaluate(std::span<const double> values, const Statistic& s) {
  if (values.empty()) return 0;
  if (s.kind == Statistic::Kind::kMean) {
    double sum = 0;
    for (double v : values) sum += v;
    return sum / static_cast<double>(values.size());
  }
  std::vector<double> copy(values.begin(), values.end());
  return stats::PercentileInPlace(copy, s.p);
}

std::vector<Replicates> Bootstrap(const UnitSample& sample, std::span<const Statistic> stats,
                                  const BootstrapOptions& options, uint64_t stream) {
  const int64_t n = sample.units();
  std::vector<Replicates> out(stats.size());
  for (std::size_t k = 0; k < stats.size(); ++k) {
    out[k].estimate = Evaluate(sample.AllValues(), stats[k]);
    out[k].units = n;
  }
  if (n == 0 || options.resamples <= 0) return out;

  // m: as many requests as keep a replicate near max_values values, at least min_units.
  const double per_unit = static_cast<double>(sample.values()) / static_cast<double>(n);
  int64_t m = n;
  if (static_cast<double>(n) * per_unit > static_cast<double>(options.max_values)) {
    m = std::max<int64_t>(options.min_units, static_cast<int64_t>(static_cast<double>(options.max_values) / per_unit));
    m = std::min(m, n);
  }
  const double scale = std::sqrt(static_cast<double>(m) / static_cast<double>(n));
  // Blocks of sqrt(n) neighbours (at least ten blocks per replicate): long enough for the
  // correlation a queue builds over seconds of a run.
  const int64_t block = std::clamp<int64_t>(
      options.block > 0 ? options.block : std::llround(std::sqrt(static_cast<double>(n))), 1, std::max<int64_t>(1, m / 10));

  std::vector<std::size_t> order(stats.size());
  for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    const double px = stats[x].kind == Statistic::Kind::kMean ? -1 : stats[x].p;
    const double py = stats[y].kind == Statistic::Kind::kMean ? -1 : stats[y].p;
    return px < py;
  });

  SplitMix64 rng{options.seed ^ (0xa0761d6478bd642fULL * (stream + 1))};
  const bool one_per_unit = sample.values() == n;
  std::vector<double> buf, values(stats.size());
  buf.reserve(static_cast<std::size_t>(static_cast<double>(m) * per_unit * 1.5) + 16);
  for (Replicates& r : out) {
    r.drawn = m;
    r.block = block;
    r.deviations.reserve(static_cast<std::size_t>(options.resamples));
  }
  for (int rep = 0; rep < options.resamples; ++rep) {
    buf.clear();
    double sum = 0;
    if (one_per_unit) {
      const double* all = sample.AllValues().data();
      buf.resize(static_cast<std::size_t>(m));
      for (int64_t i = 0; i < m;) {
        int64_t u = static_cast<int64_t>(rng.Below(static_cast<uint64_t>(n)));
        for (int64_t j = 0; j < block && i < m; ++j, ++i, u = u + 1 == n ? 0 : u + 1) {
          const double v = all[u];
          buf[static_cast<std::size_t>(i)] = v;
          sum += v;
        }
      }
    } else {
      for (int64_t i = 0; i < m;) {
        int64_t u = static_cast<int64_t>(rng.Below(static_cast<uint64_t>(n)));
        for (int64_t j = 0; j < block && i < m; ++j, ++i, u = u + 1 == n ? 0 : u + 1) {
          for (double v : sample.Unit(u)) {
            buf.push_back(v);
            sum += v;
          }
        }
      }
    }
    EvaluateAll(buf, sum, stats, order, values);
    for (std::size_t k = 0; k < stats.size(); ++k) out[k].deviations.push_back(scale * (values[k] - out[k].estimate));
  }
  return out;
}

Replicates Scaled(Replicates r, double factor) {
  r.estimate *= factor;
  for (double& d : r.deviations) d *= factor;
  return r;
}

DeltaCi CompareReplicates(const Replicates& a, const Replicates& b, double confidence) {
  DeltaCi d;
  d.a = a.estimate;
  d.b = b.estimate;
  d.delta = b.estimate - a.estimate;
  d.n_a = a.units;
  d.n_b = b.units;
  d.confidence = confidence;
  if (a.estimate > 0) d.rel = d.delta / a.estimate;
  const std::size_t r = std::min(a.deviations.size(), b.deviations.size());
  if (a.units == 0 || b.units == 0 || r == 0) return d;
  d.defined = true;
  const double tail = (1 - confidence) / 2;
  std::vector<double> diff(r), rel;
  rel.reserve(r);
  for (std::size_t i = 0; i < r; ++i) {
    diff[i] = d.delta + b.deviations[i] - a.deviations[i];
    const double ra = a.estimate + a.deviations[i];
    if (d.rel && ra > 0) rel.push_back((b.estimate + b.deviations[i]) / ra - 1);
  }
  d.low = Quantile(diff, tail);
  d.high = Quantile(diff, 1 - tail);
  // Replicates where A's statistic was 0 have no ratio; with fewer than 95% usable, the
  // relative interval would not mean what it says, so it is left unset.
  if (d.rel && static_cast<double>(rel.size()) >= 0.95 * static_cast<double>(r)) {
    d.rel_low = Quantile(rel, tail);
    d.rel_high = Quantile(rel, 1 - tail);
  }
  return d;
}

DeltaCi BootstrapDifference(const UnitSample& a, const UnitSample& b, const Statistic& s,
                            const BootstrapOptions& options, uint64_t stream) {
  const Statistic one[] = {s};
  std::vector<Replicates> ra = Bootstrap(a, one, options, 2 * stream);
  std::vector<Replicates> rb = Bootstrap(b, one, options, 2 * stream + 1);
  return CompareReplicates(ra[0], rb[0], options.confidence);
}

std::optional<int64_t> RequestsToDetect(const DeltaCi& d) {
  if (!d.defined || d.delta == 0 || d.n_a <= 0 || d.n_b <= 0) return std::nullopt;
  const double half = (d.high - d.low) / 2;
  if (!(half > 0)) return std::nullopt;
  const double n_eff = 2.0 / (1.0 / static_cast<double>(d.n_a) + 1.0 / static_cast<double>(d.n_b));
  const double ratio = (1.96 + 0.8416) / 1.96 * half / std::fabs(d.delta);
  const double n = std::ceil(n_eff * ratio * ratio);
  if (!(n < 1e15)) return std::numeric_limits<int64_t>::max();
  return std::max<int64_t>(2, static_cast<int64_t>(n));
}

namespace {

// Two-sided normal quantile for the usual confidence levels (Acklam's rational
// approximation would be overkill: the levels people use are tabulated).
double NormalQuantileTwoSided(double confidence) {
  if (confidence >= 0.999) return 3.2905;
  if (confidence >= 0.99) return 2.5758;
  if (confidence >= 0.98) return 2.3263;
  if (confidence >= 0.95) return 1.95996;
  if (confidence >= 0.90) return 1.64485;
  return 1.28155;  // 80%
}

struct Wilson {
  double low, high;
};
Wilson WilsonInterval(int64_t x, int64_t n, double z) {
  const double nn = static_cast<double>(n);
  const double p = static_cast<double>(x) / nn;
  const double z2 = z * z;
  const double denom = 1 + z2 / nn;
  const double center = (p + z2 / (2 * nn)) / denom;
  const double half = z / denom * std::sqrt(p * (1 - p) / nn + z2 / (4 * nn * nn));
  return {std::max(0.0, center - half), std::min(1.0, center + half)};
}

}  // namespace

DeltaCi TwoProportionDelta(int64_t x_a, int64_t n_a, int64_t x_b, int64_t n_b, double confidence) {
  DeltaCi d;
  d.n_a = n_a;
  d.n_b = n_b;
  d.confidence = confidence;
  d.a = n_a > 0 ? static_cast<double>(x_a) / static_cast<double>(n_a) : 0;
  d.b = n_b > 0 ? static_cast<double>(x_b) / static_cast<double>(n_b) : 0;
  d.delta = d.b - d.a;
  if (n_a <= 0 || n_b <= 0 || x_a < 0 || x_b < 0 || x_a > n_a || x_b > n_b) return d;
  d.defined = true;
  const double z = NormalQuantileTwoSided(confidence);
  const Wilson wa = WilsonInterval(x_a, n_a, z), wb = WilsonInterval(x_b, n_b, z);
  d.low = d.delta - std::sqrt((d.b - wb.low) * (d.b - wb.low) + (wa.high - d.a) * (wa.high - d.a));
  d.high = d.delta + std::sqrt((wb.high - d.b) * (wb.high - d.b) + (d.a - wa.low) * (d.a - wa.low));
  return d;
}

Replicates RateReplicates(const Replicates& mean, double rate, uint64_t seed, uint64_t stream) {
  Replicates r;
  r.estimate = rate;
  r.units = mean.units;
  r.drawn = mean.drawn;
  r.block = mean.block;
  r.deviations.assign(mean.deviations.size(), 0);
  if (!(mean.estimate > 0) || mean.units <= 0) return r;
  SplitMix64 rng{seed ^ (0xe7037ed1a0b428dbULL * (stream + 1))};
  const double sd_count = 1 / std::sqrt(static_cast<double>(mean.units));
  for (std::size_t i = 0; i < mean.deviations.size(); ++i) {
    // Box-Muller: one standard normal per replicate (deterministic, no <random> distribution).
    const double u1 = (static_cast<double>(rng.Next() >> 11) + 0.5) * 0x1.0p-53;
    const double u2 = static_cast<double>(rng.Next() >> 11) * 0x1.0p-53;
    const double z = std::sqrt(-2 * std::log(u1)) * std::cos(6.283185307179586 * u2);
    const double count_factor = 1 + z * sd_count;
    r.deviations[i] = rate * ((1 + mean.deviations[i] / mean.estimate) * count_factor - 1);
  }
  return r;
}

}  // namespace infereng::metrics
