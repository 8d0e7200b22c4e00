#include "metrics/timeseries.h"

#include <algorithm>
#include <limits>

namespace infereng::metrics {

TimeSeriesBuilder::TimeSeriesBuilder(Nanos t0, double bucket_s, int max_buckets)
    : t0_(t0),
      width_(std::max<Nanos>(SecondsToNanos(bucket_s), kNanosPerMilli)),
      max_buckets_(static_cast<size_t>(std::max(max_buckets, 2))),
      hist_options_{.lowest = 1e-3, .highest = 1e8, .sub_buckets = 16} {}

void TimeSeriesBuilder::Coarsen() {
  std::vector<Bucket> merged;
  merged.reserve((buckets_.size() + 1) / 2);
  for (size_t i = 0; i < buckets_.size(); i += 2) {
    Bucket b = std::move(buckets_[i]);
    if (i + 1 < buckets_.size()) {
      const Bucket& o = buckets_[i + 1];
      b.sent += o.sent;
      b.completed += o.completed;
      b.errors += o.errors;
      b.output_tokens += o.output_tokens;
      b.ttft_count += o.ttft_count;
      b.in_flight_ns += o.in_flight_ns;
      b.ttft_sum_ms += o.ttft_sum_ms;
      (void)b.ttft.Merge(o.ttft);  // same options by construction
    }
    merged.push_back(std::move(b));
  }
  buckets_ = std::move(merged);
  width_ *= 2;
}

size_t TimeSeriesBuilder::Slot(Nanos t) {
  const Nanos rel = std::max<Nanos>(t - t0_, 0);
  while (static_cast<size_t>(rel / width_) >= max_buckets_) Coarsen();
  const size_t idx = static_cast<size_t>(rel / width_);
  while (buckets_.size() <= idx) buckets_.emplace_back(hist_options_);
  return idx;
}

void TimeSeriesBuilder::Add(const RequestRecord& r, double ttft_ms) {
  const Nanos last_chunk = r.chunks.empty() ? -1 : r.chunks.back().t;
  const Nanos end = r.t_end >= 0 ? r.t_end : last_chunk;
  // Coarsen for the latest event first so the slots computed below stay valid.
  Nanos latest = std::max({r.t_send, end, r.t_sched});
  if (latest >= 0) Slot(latest);

  if (r.t_send >= 0) ++buckets_[Slot(r.t_send)].sent;
  {
    // Chunks come in time order: most fall in the previous chunk's bucket, so only a chunk
    // outside [lo, hi) pays for Slot() (bucket 0 also holds everything before t0).
    Nanos lo = 0, hi = 0;
    size_t idx = 0;
    for (const Chunk& c : r.chunks) {
      if (c.t < lo || c.t >= hi) {
        idx = Slot(c.t);  // may coarsen: the bounds come from the width after it
        lo = idx == 0 ? std::numeric_limits<Nanos>::min() : t0_ + static_cast<Nanos>(idx) * width_;
        hi = t0_ + static_cast<Nanos>(idx + 1) * width_;
      }
      buckets_[idx].output_tokens += c.tokens;
    }
  }
  if (r.ok()) {
    if (last_chunk >= 0 || end >= 0) ++buckets_[Slot(last_chunk >= 0 ? last_chunk : end)].completed;
  } else {
    const Nanos t = end >= 0 ? end : (r.t_send >= 0 ? r.t_send : r.t_sched);
    if (t >= 0) ++buckets_[Slot(t)].errors;
  }
  if (ttft_ms >= 0 && !r.chunks.empty()) {
    Bucket& b = buckets_[Slot(r.chunks.front().t)];
    ++b.ttft_count;
    b.ttft_sum_ms += ttft_ms;
    b.ttft.Add(ttft_ms);
  }
  if (r.t_send >= 0 && end > r.t_send) {
    // Spread the request's lifetime over the buckets it overlaps.
    Nanos t = std::max(r.t_send, t0_);
    while (t < end) {
      const size_t idx = Slot(t);
      const Nanos bucket_end = t0_ + static_cast<Nanos>(idx + 1) * width_;
      const Nanos seg_end = std::min(end, bucket_end);
      buckets_[idx].in_flight_ns += static_cast<double>(seg_end - t);
      t = seg_end;
    }
  }
}

std::vector<TimeBucket> TimeSeriesBuilder::Buckets() const {
  std::vector<TimeBucket> out;
  out.reserve(buckets_.size());
  const double w = NanosToSeconds(width_);
  for (size_t i = 0; i < buckets_.size(); ++i) {
    const Bucket& b = buckets_[i];
    TimeBucket tb;
    tb.start_s = w * static_cast<double>(i);
    tb.width_s = w;
    tb.sent = b.sent;
    tb.completed = b.completed;
    tb.errors = b.errors;
    tb.output_tokens = b.output_tokens;
    tb.in_flight = b.in_flight_ns / static_cast<double>(width_);
    tb.ttft_count = b.ttft_count;
    if (b.ttft_count > 0) {
      tb.ttft_mean_ms = b.ttft_sum_ms / static_cast<double>(b.ttft_count);
      tb.ttft_p99_ms = b.ttft.Percentile(99);
    }
    out.push_back(tb);
  }
  return out;
}

}  // namespace infereng::metrics
