#include "core/histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <string>

namespace infereng {
namespace {
// Serialised histograms may not ask for more memory than this (8 MiB of counters).
constexpr double kMaxBuckets = 1 << 20;
}  // namespace

LogHistogram::LogHistogram(HistogramOptions options) : options_(options) {
  // Keep the mapping well defined even for odd options; FromParts validates strictly.
  if (!(options_.lowest > 0) || !std::isfinite(options_.lowest)) options_.lowest = 1e-3;
  if (!(options_.highest > options_.lowest) || !std::isfinite(options_.highest)) {
    options_.highest = options_.lowest * 2;
  }
  options_.sub_buckets = std::clamp(options_.sub_buckets, 1, 1 << 16);
  const double octaves = std::ceil(std::log2(options_.highest / options_.lowest));
  num_octaves_ = static_cast<int>(std::min(octaves, 2048.0)) + 1;
  num_buckets_ = 1 + num_octaves_ * options_.sub_buckets;
}

int LogHistogram::BucketIndex(double value) const {
  if (!(value >= options_.lowest)) return 0;  // below lowest, negative (NaN is filtered before)
  // value / lowest = 1.f * 2^octave (>= 1, so never subnormal). Read octave and f from the
  // bits instead of calling frexp (a libm call per sample): frexp's m * 2 - 1 is exactly
  // 1.f - 1, so every index is the same as the frexp formulation (pinned by a test).
  const uint64_t bits = std::bit_cast<uint64_t>(value / options_.lowest);
  const int biased = static_cast<int>(bits >> 52) & 0x7ff;
  if (biased == 0x7ff) return num_buckets_ - 1;  // value / lowest overflowed to infinity
  const int octave = biased - 1023;
  if (octave >= num_octaves_) return num_buckets_ - 1;
  const int s = options_.sub_buckets;
  const double frac =
      std::bit_cast<double>((bits & 0x000f'ffff'ffff'ffffULL) | 0x3ff0'0000'0000'0000ULL) - 1.0;
  int sub = static_cast<int>(frac * s);
  sub = std::clamp(sub, 0, s - 1);
  return 1 + octave * s + sub;
}

double LogHistogram::BucketLow(int index) const {
  if (index <= 0) return 0;
  const int s = options_.sub_buckets;
  const int octave = (index - 1) / s, sub = (index - 1) % s;
  return std::ldexp(options_.lowest, octave) * (1 + static_cast<double>(sub) / s);
}

double LogHistogram::BucketHigh(int index) const {
  if (index <= 0) return options_.lowest;
  const int s = options_.sub_buckets;
  const int octave = (index - 1) / s, sub = (index - 1) % s;
  return std::ldexp(options_.lowest, octave) * (1 + static_cast<double>(sub + 1) / s);
}

double LogHistogram::BucketValue(int index) const {
  return (BucketLow(index) + BucketHigh(index)) / 2;
}

void LogHistogram::AddN(double value, uint64_t n) {
  if (n == 0) return;
  if (std::isnan(value)) {
    nan_ += n;
    return;
  }
  if (value > options_.highest) overflow_ += n;
  const int idx = BucketIndex(value);
  if (static_cast<size_t>(idx) >= counts_.size()) counts_.resize(static_cast<size_t>(idx) + 1, 0);
  counts_[static_cast<size_t>(idx)] += n;
  if (count_ == 0) {
    min_ = max_ = value;
  } else {
    min_ = std::min(min_, value);
    max_ = std::max(max_, value);
  }
  count_ += n;
  sum_ += value * static_cast<double>(n);
}

void LogHistogram::AddAll(std::span<const double> values) {
  // AddN(v, 1) per value with the running totals in locals (the counter stores could alias
  // the uint64_t members otherwise); the sum is added in the same order, so it is identical
  // bit for bit to adding one by one.
  uint64_t count = count_, overflow = overflow_, nan = nan_;
  double sum = sum_, lo = min_, hi = max_;
  for (const double v : values) {
    if (std::isnan(v)) {
      ++nan;
      continue;
    }
    if (v > options_.highest) ++overflow;
    const size_t idx = static_cast<size_t>(BucketIndex(v));
    if (idx >= counts_.size()) counts_.resize(idx + 1, 0);
    ++counts_[idx];
    if (count == 0) {
      lo = hi = v;
    } else {
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    ++count;
    sum += v;
  }
  count_ = count;
  overflow_ = overflow;
  nan_ = nan;
  sum_ = sum;
  min_ = lo;
  max_ = hi;
}

Status LogHistogram::Merge(const LogHistogram& other) {
  if (!(options_ == other.options_)) {
    return Status::InvalidArgument("cannot merge histograms with different bucket options");
  }
  if (other.count_ == 0 && other.nan_ == 0) return Status::Ok();
  if (other.counts_.size() > counts_.size()) counts_.resize(other.counts_.size(), 0);
  for (size_t i = 0; i < other.counts_.size(); ++i) counts_[i] += other.counts_[i];
  if (other.count_ > 0) {
    if (count_ == 0) {
      min_ = other.min_;
      max_ = other.max_;
    } else {
      min_ = std::min(min_, other.min_);
      max_ = std::max(max_, other.max_);
    }
  }
  count_ += other.count_;
  sum_ += other.sum_;
  overflow_ += other.overflow_;
  nan_ += other.nan_;
  return Status::Ok();
}

void LogHistogram::Clear() {
  counts_.clear();
  count_ = overflow_ = nan_ = 0;
  sum_ = min_ = max_ = 0;
}

bool LogHistogram::SameBuckets(const LogHistogram& other) const {
  if (!(options_ == other.options_)) return false;
  const size_t n = std::max(counts_.size(), other.counts_.size());
  for (size_t i = 0; i < n; ++i) {
    const uint64_t a = i < counts_.size() ? counts_[i] : 0;
    const uint64_t b = i < other.counts_.size() ? other.counts_[i] : 0;
    if (a != b) return false;
  }
  return true;
}

double LogHistogram::ValueAtRank(uint64_t k) const {
  // The extreme ranks are known exactly.
  if (k == 0) return min_;
  if (k + 1 >= count_) return max_;
  uint64_t seen = 0;
  for (size_t i = 0; i < counts_.size(); ++i) {
    seen += counts_[i];
    if (seen > k) return std::clamp(BucketValue(static_cast<int>(i)), min_, max_);
  }
  return max_;
}

double LogHistogram::Percentile(double p) const {
  if (count_ == 0) return 0;
  p = std::clamp(p, 0.0, 100.0);
  const double rank = p / 100.0 * static_cast<double>(count_ - 1);
  const double lo_rank = std::floor(rank);
  const uint64_t lo = static_cast<uint64_t>(lo_rank);
  const double frac = rank - lo_rank;
  const double a = ValueAtRank(lo);
  if (frac == 0) return a;
  const double b = ValueAtRank(std::min(lo + 1, count_ - 1));
  return a + (b - a) * frac;
}

stats::SampleStats LogHistogram::Stats() const {
  stats::SampleStats s;
  if (count_ == 0) return s;
  s.count = static_cast<int64_t>(count_);
  s.min = min_;
  s.max = max_;
  s.mean = mean();
  double ss = 0;
  for (size_t i = 0; i < counts_.size(); ++i) {
    if (counts_[i] == 0) continue;
    const double d = std::clamp(BucketValue(static_cast<int>(i)), min_, max_) - s.mean;
    ss += d * d * static_cast<double>(counts_[i]);
  }
  s.stddev = std::sqrt(ss / static_cast<double>(count_));
  s.p50 = Percentile(50);
  s.p90 = Percentile(90);
  s.p95 = Percentile(95);
  s.p99 = Percentile(99);
  s.p99_9 = Percentile(99.9);
  return s;
}

Result<LogHistogram> LogHistogram::FromParts(HistogramOptions options, std::vector<uint64_t> counts,
                                             double sum, double min, double max,
                                             uint64_t overflow) {
  if (!(options.lowest > 0) || !(options.highest > options.lowest) || options.sub_buckets < 1 ||
      options.sub_buckets > (1 << 16)) {
    return Status::InvalidArgument("histogram options: need 0 < lowest < highest and 1 <= sub_buckets <= 65536");
  }
  if (!std::isfinite(options.highest) || std::log2(options.highest / options.lowest) * options.sub_buckets > kMaxBuckets) {
    return Status::InvalidArgument("histogram options: more than " + std::to_string(kMaxBuckets) +
                                   " buckets (range or sub_buckets too large)");
  }
  LogHistogram h(options);
  if (counts.size() > static_cast<size_t>(h.num_buckets_)) {
    return Status::InvalidArgument("histogram: " + std::to_string(counts.size()) +
                                   " bucket counts, at most " + std::to_string(h.num_buckets_) +
                                   " for these options");
  }
  uint64_t total = 0;
  for (uint64_t c : counts) total += c;
  if (total > 0 && !(min <= max)) return Status::InvalidArgument("histogram: min > max");
  if (overflow > total) return Status::InvalidArgument("histogram: overflow exceeds count");
  while (!counts.empty() && counts.back() == 0) counts.pop_back();
  h.counts_ = std::move(counts);
  h.count_ = total;
  h.sum_ = total ? sum : 0;
  h.min_ = total ? min : 0;
  h.max_ = total ? max : 0;
  h.overflow_ = overflow;
  return h;
}

}  // namespace infereng
