// ServeMetrics: the server's Prometheus exposition, with vLLM's metric names and semantics
// (label model_name), plus infereng's own emission-lateness histogram.
//
// Request-level histograms are observed in wall-clock seconds as the client sees them
// (with --speedup K they are K times shorter than the twin's virtual times):
//   vllm:time_to_first_token_seconds   arrival -> first token emitted
//   vllm:inter_token_latency_seconds   gap between consecutive engine emissions of a request
//   vllm:e2e_request_latency_seconds   arrival -> finish
//   vllm:request_queue_time_seconds    arrival -> first scheduled by the engine
// Gauges and the prefix-cache / preemption counters come from EngineStats at scrape time.
// Thread-safety: none; owned and used by the server thread only.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/histogram.h"
#include "serve/engine_port.h"

namespace infereng::serve {

class PromHistogram {
 public:
  explicit PromHistogram(std::vector<double> bounds) : bounds_(std::move(bounds)), counts_(bounds_.size() + 1) {}
  void Observe(double v);
  void Render(std::string& out, const std::string& name, const std::string& help, const std::string& labels) const;
  uint64_t count() const { return count_; }

 private:
  std::vector<double> bounds_;
  std::vector<uint64_t> counts_;  // per bucket (not cumulative); last = +Inf
  double sum_ = 0;
  uint64_t count_ = 0;
};

// Emission-lateness statistics for Snapshot(): count, exact max, and percentiles from the
// one percentile rule (core/histogram.h: log buckets, relative error <= 0.79%, clamped to
// the exact min/max), in a few kilobytes whatever the run length.
class LatenessRecorder {
 public:
  LatenessRecorder() : hist_(kOptions) {}
  void Record(Nanos late) { hist_.Add(static_cast<double>(std::max<Nanos>(late, 0))); }
  int64_t count() const { return static_cast<int64_t>(hist_.count()); }
  Nanos max() const { return static_cast<Nanos>(hist_.max()); }
  void Clear() { hist_.Clear(); }
  Nanos Percentile(double p) const { return static_cast<Nanos>(std::llround(hist_.Percentile(p))); }

 private:
  // Nanoseconds: resolved from 100 ns (below: one bucket) up to 1000 s.
  static constexpr HistogramOptions kOptions{.lowest = 100, .highest = 1e12, .sub_buckets = 64};
  LogHistogram hist_;
};

struct ServeCounters {
  int64_t prompt_tokens = 0;
  int64_t generation_tokens = 0;
  std::map<std::string, int64_t> success_by_reason;  // "length", "stop", "abort", "error"
  int64_t rejected = 0;
  int64_t aborted = 0;
};

class ServeMetrics {
 public:
  ServeMetrics();
  PromHistogram ttft, itl, e2e, queue, lateness;
  LatenessRecorder lateness_fine;
  ServeCounters counters;

  // The whole /metrics body (text format 0.0.4).
  std::string Render(const std::string& model_name, const EngineStats& engine) const;
};

}  // namespace infereng::serve
