// SampleSink and EventTally: the two storage policies behind SummaryAccumulator's exact
// and histogram modes (internal to metrics/).
//
// SampleSink holds one distribution: raw samples (exact, numpy-linear percentiles) or a
// LogHistogram (fixed memory). EventTally counts timed events (tokens, completions) at or
// after a start time so a window end decided later can still be applied: exact mode keeps
// every (t, n); binned mode keeps at most kMaxBins bins whose width doubles as needed,
// prorating the bin that straddles the end (error <= one bin, i.e. <= span / 2048). When the
// end is known up front, events are simply counted (exact, constant memory).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "core/clock.h"
#include "core/histogram.h"
#include "core/stats.h"
#include "metrics/record.h"

namespace infereng::metrics {

class SampleSink {
 public:
  SampleSink(bool exact, const HistogramOptions& options) : exact_(exact), hist_(options) {}

  void Add(double v) {
    if (exact_) {
      samples_.push_back(v);
      sorted_ = false;
    } else {
      hist_.Add(v);
    }
  }
  // Add(v) for each value, in order, with one call (per-token samples).
  void AddAll(std::span<const double> values) {
    if (exact_) {
      samples_.insert(samples_.end(), values.begin(), values.end());
      sorted_ = sorted_ && values.empty();
    } else {
      hist_.AddAll(values);
    }
  }
  int64_t count() const {
    return exact_ ? static_cast<int64_t>(samples_.size()) : static_cast<int64_t>(hist_.count());
  }
  stats::SampleStats Stats() const;
  double Percentile(double p) const;
  const LogHistogram& histogram() const { return hist_; }

 private:
  // Exact mode: sorts samples_ in place once (the order of samples carries no meaning), so
  // repeated Stats()/Percentile() calls after the run cost no further sorting.
  void SortOnce() const;

  bool exact_;
  mutable std::vector<double> samples_;  // exact mode
  mutable bool sorted_ = true;
  LogHistogram hist_;            // histogram mode
};

class EventTally {
 public:
  static constexpr int kMaxBins = 4096;
  // With `known_end`, events are counted directly (exact, O(1) memory) and CountUpTo must be
  // asked for that end; otherwise `exact` chooses the event list or the bins.
  EventTally(bool exact, Nanos start, std::optional<Nanos> known_end = std::nullopt)
      : exact_(exact), start_(start), known_end_(known_end) {}

  // Events before `start` are ignored.
  void Add(Nanos t, int64_t n);
  // Add(c.t, c.tokens) for each chunk: one division per bin touched instead of per chunk.
  void AddChunks(std::span<const Chunk> chunks);
  // Sum of events with start <= t <= end.
  double CountUpTo(Nanos end) const;

 private:
  bool exact_;
  Nanos start_;
  std::optional<Nanos> known_end_;
  int64_t known_total_ = 0;  // known_end_ mode: events in [start, known_end]
  std::vector<std::pair<Nanos, int64_t>> events_;  // exact mode
  Nanos bin_width_ = kNanosPerMilli;                // binned mode
  std::vector<int64_t> bins_;
};

}  // namespace infereng::metrics
