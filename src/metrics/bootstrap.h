// Bootstrap confidence intervals for the difference of a statistic between two runs (A, B):
// percentiles and means of per-request latencies, and rates built from per-request
// contributions. The unit of resampling is the request: a request may hold several values
// (its token-expanded ITL gaps), and resampling keeps them together (a cluster bootstrap),
// so a request with a long ITL tail counts once, as it happened.
//
// Method (docs/compare.md, "Statistics"): A and B are resampled independently, R times each
// (seeded, deterministic on every platform: a local splitmix64 generator, no <random>
// distributions). Requests are drawn in blocks of consecutive ones (in the order given:
// the order they finished), circular, round(sqrt(n)) long (at most m/10) — a moving-block
// bootstrap — because neighbouring requests share a queue and a batch for seconds: drawing
// them one by one would treat correlated latencies as independent and make the interval too
// narrow (two seeds of one configuration then "differ"). Each replicate
// draws m requests with replacement, computes every
// requested statistic from the same draw, and keeps the deviation from the full-sample
// estimate. Cost is bounded: m is the number of requests unless that would gather more than
// `max_values` values, in which case fewer requests are drawn (never fewer than
// `min_units`) and the deviations are scaled by sqrt(m / n) — the m-out-of-n bootstrap,
// valid for statistics with sqrt(n) asymptotics such as means and (continuous) quantiles —
// so a 100k-request run costs what a 10k-value run costs and its interval keeps the full
// sample's width. The interval of B - A is the percentile interval of
// (B̂ - Â) + (dev_B - dev_A); the relative interval is the same on (B̂ + dev_B) / (Â + dev_A) - 1.
//
// Nothing here prints or allocates beyond the samples and the replicate vectors; all
// functions are pure given their seed.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace infereng::metrics {

// Per-request values of one run. Units with no values (a request without a TTFT) are not
// stored: they cannot move a statistic of the values.
class UnitSample {
 public:
  // Each value is its own unit (TTFT, E2E, TPOT: one value per request).
  static UnitSample OnePerUnit(std::span<const double> values);
  // Appends one unit (a request's ITL gaps); ignored when `values` is empty.
  void AddUnit(std::span<const double> values);

  int64_t units() const { return static_cast<int64_t>(offsets_.size()) - 1; }
  int64_t values() const { return static_cast<int64_t>(values_.size()); }
  std::span<const double> Unit(int64_t i) const {
    return {values_.data() + offsets_[i], offsets_[i + 1] - offsets_[i]};
  }
  std::span<const double> AllValues() const { return values_; }

 private:
  std::vector<double> values_;
  std::vector<std::size_t> offsets_{0};  // unit i is values_[offsets_[i], offsets_[i+1])
};

// A statistic of the pooled values: percentile p (numpy "linear", as core/stats.h) or the mean.
struct Statistic {
  enum class Kind { kPercentile, kMean };
  Kind kind = Kind::kPercentile;
  double p = 50;  // kPercentile only

  static Statistic Percentile(double p) { return {Kind::kPercentile, p}; }
  static Statistic Mean() { return {Kind::kMean, 0}; }
};

// The statistic of all values (no resampling); 0 for an empty sample.
double Evaluate(std::span<const double> values, const Statistic& s);

struct BootstrapOptions {
  int resamples = 1000;         // replicates per run
  double confidence = 0.95;     // two-sided
  uint64_t seed = 20261201;     // same seed, same intervals
  int64_t max_values = 10000;   // values gathered per replicate (cost bound)
  int64_t min_units = 200;      // never draw fewer requests than this (or n when smaller)
  int64_t block = 0;            // consecutive requests per draw; 0: round(sqrt(n)), at most m/10; 1: iid
};

// The replicates of one statistic of one run.
struct Replicates {
  double estimate = 0;              // the full-sample statistic
  std::vector<double> deviations;   // sqrt(m/n) * (replicate - estimate), one per replicate
  int64_t units = 0;                // n: requests in the sample
  int64_t drawn = 0;                // m: requests drawn per replicate (m < n: m-out-of-n)
  int64_t block = 1;                // consecutive requests per draw
};

// Resamples `sample` once per replicate and evaluates every statistic on each draw. `stream`
// separates the random streams of different samples under one seed (A and B, metrics).
// An empty sample gives replicates with units 0 and no deviations.
std::vector<Replicates> Bootstrap(const UnitSample& sample, std::span<const Statistic> stats,
                                  const BootstrapOptions& options, uint64_t stream);

// The same replicates multiplied by `factor`.
Replicates Scaled(Replicates r, double factor);

// The replicates of a rate (requests/s, tokens/s, goodput): `rate` (the run's own figure) is
// the mean per-request contribution (`mean`: its bootstrap replicates) times the number of
// requests over the window, and that number varies from run to run as well (arrivals): as a
// Poisson count, relative sd 1/sqrt(n) (normal approximation, drawn per replicate from
// `seed` and `stream`). Without that term a run where every request succeeded would give
// request throughput a zero-width interval.
Replicates RateReplicates(const Replicates& mean, double rate, uint64_t seed, uint64_t stream);

// The estimate of B - A with its interval, and B / A - 1 with its interval when A > 0.
struct DeltaCi {
  double a = 0, b = 0;            // the two estimates
  double delta = 0;               // b - a
  double low = 0, high = 0;       // interval of b - a
  std::optional<double> rel, rel_low, rel_high;  // (b - a) / a; unset when a <= 0
  int64_t n_a = 0, n_b = 0;       // units (requests) behind each estimate
  double confidence = 0.95;
  bool defined = false;           // both samples non-empty (else only a, b are meaningful)

  bool ExcludesZero() const { return defined && (low > 0 || high < 0); }
};

// Pairs the replicates of A and B (independent draws) into the interval of the difference.
DeltaCi CompareReplicates(const Replicates& a, const Replicates& b, double confidence);

// Convenience: one statistic, both runs.
DeltaCi BootstrapDifference(const UnitSample& a, const UnitSample& b, const Statistic& s,
                            const BootstrapOptions& options, uint64_t stream = 0);

// Requests per run needed to detect the observed difference, and how it was estimated:
// the interval's half-width shrinks as sqrt(1/n_a + 1/n_b) (normal approximation, the
// observed difference taken as the true one); to exclude 0 with 80% power the half-width
// must fall to |delta| × 1.96 / (1.96 + 0.84). With equal runs of n requests that is
// n_needed = n_eff × ((1.96 + 0.84) / 1.96 × half_width / |delta|)², n_eff = 2 / (1/n_a + 1/n_b).
// Unset when the interval is undefined or delta is 0 (no effect to detect).
std::optional<int64_t> RequestsToDetect(const DeltaCi& d);

// Two proportions (error rate, quality pass rate) need no resampling: the difference
// x_b/n_b - x_a/n_a with Newcombe's hybrid score interval (Wilson intervals of each
// proportion combined; Newcombe 1998, method 10), which keeps its coverage with few events
// and at 0 or 1, where the Wald interval collapses. The relative interval is not given.
// n_a or n_b of 0: `defined` false.
DeltaCi TwoProportionDelta(int64_t x_a, int64_t n_a, int64_t x_b, int64_t n_b, double confidence = 0.95);
inline constexpr const char* kRequestsToDetectMethod =
    "requests per run for 80% power to detect the observed difference: n x ((1.96 + 0.84) / 1.96 x "
    "half-width / |delta|)^2 (the interval narrows as 1/sqrt(n); normal approximation)";

}  // namespace infereng::metrics
