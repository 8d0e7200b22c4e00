#include "metrics/sample_sink.h"

#include <algorithm>

namespace infereng::metrics {

void SampleSink::SortOnce() const {
  if (sorted_) return;
  std::sort(samples_.begin(), samples_.end());
  sorted_ = true;
}

stats::SampleStats SampleSink::Stats() const {
  if (!exact_) return hist_.Stats();
  SortOnce();
  return stats::SummarizeInPlace(samples_);  // already sorted: the sort inside is linear
}

double SampleSink::Percentile(double p) const {
  if (!exact_) return hist_.Percentile(p);
  SortOnce();
  return stats::PercentileSorted(samples_, p);
}

void EventTally::Add(Nanos t, int64_t n) {
  if (t < start_ || n == 0) return;
  if (known_end_) {
    if (t <= *known_end_) known_total_ += n;
    return;
  }
  if (exact_) {
    events_.emplace_back(t, n);
    return;
  }
  Nanos idx = (t - start_) / bin_width_;
  while (idx >= kMaxBins) {
    // Merge adjacent pairs: the width doubles, memory stays at kMaxBins.
    for (size_t i = 0; i < bins_.size(); ++i) {
      if (i % 2 == 0) {
        bins_[i / 2] = bins_[i];
      } else {
        bins_[i / 2] += bins_[i];
      }
    }
    bins_.resize((bins_.size() + 1) / 2);
    bin_width_ *= 2;
    idx = (t - start_) / bin_width_;
  }
  if (static_cast<size_t>(idx) >= bins_.size()) bins_.resize(static_cast<size_t>(idx) + 1, 0);
  bins_[static_cast<size_t>(idx)] += n;
}

void EventTally::AddChunks(std::span<const Chunk> chunks) {
  if (known_end_ || exact_) {
    for (const Chunk& c : chunks) Add(c.t, c.tokens);
    return;
  }
  // Binned: chunks come in time order, so most fall in the bin of the previous one. The
  // bins are integer sums and merging commutes with adding, so the result is Add's.
  Nanos lo = 0, hi = 0;  // the cached bin [lo, hi); empty at first
  size_t idx = 0;
  for (const Chunk& c : chunks) {
    if (c.tokens == 0 || c.t < start_) continue;
    if (c.t < lo || c.t >= hi) {
      Add(c.t, c.tokens);  // may merge bins: recompute the cached one from the new width
      idx = static_cast<size_t>((c.t - start_) / bin_width_);
      lo = start_ + static_cast<Nanos>(idx) * bin_width_;
      hi = lo + bin_width_;
      continue;
    }
    bins_[idx] += c.tokens;
  }
}

double EventTally::CountUpTo(Nanos end) const {
  if (end < start_) return 0;
  if (known_end_ && end == *known_end_) return static_cast<double>(known_total_);
  if (known_end_) return 0;  // not asked for the end it was built for: a caller bug
  if (exact_) {
    int64_t total = 0;
    for (const auto& [t, n] : events_) {
      if (t <= end) total += n;
    }
    return static_cast<double>(total);
  }
  double total = 0;
  for (size_t i = 0; i < bins_.size(); ++i) {
    const Nanos lo = start_ + static_cast<Nanos>(i) * bin_width_;
    const Nanos hi = lo + bin_width_;
    if (hi <= end) {
      total += static_cast<double>(bins_[i]);
    } else if (lo <= end) {
      total += static_cast<double>(bins_[i]) * static_cast<double>(end - lo + 1) /
               static_cast<double>(bin_width_);
    }
  }
  return total;
}

}  // namespace infereng::metrics
