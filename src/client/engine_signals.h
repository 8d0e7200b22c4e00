// Canonical engine signals: one data-driven table from each engine's Prometheus names to the
// signals diagnosis reasons with (requests running / waiting, KV-cache usage, preemptions,
// prefix-cache hit rate, prompt and generation throughput, batch size, spec-decode
// acceptance, queue / prefill / decode time), and the sampler that turns successive
// scrapes into one time-series line each (engine_metrics.jsonl, docs/results-schema.md).
//
// Adding an engine or a renamed metric is one row of kSignalMap (engine_signals.cc, each
// engine's rows cite the documentation they were read from). An engine the table does not
// know keeps its raw series (summed over label sets, capped) and every signal is "missing".
//
// Thread-safety: SignalSampler is used by one thread (the scraper's).
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "client/prometheus.h"

namespace infereng::client {

// How a row turns an engine metric into a signal.
enum class SignalRule {
  kGauge,          // the gauge's value x scale
  kCounterRate,    // growth of a counter per second between two scrapes
  kCounterDelta,   // growth of a counter between two scrapes (events in the interval)
  kCounterRatio,   // growth of `name` / growth of `denominator` over the interval
  kHistogramMean,  // (sum growth) / (count growth) of a histogram over the interval
  // `name` is a mean since the engine started over the counter `denominator` (llama.cpp's
  // n_busy_slots_per_decode over n_decode_total): the interval's mean is
  // (mean2 x count2 - mean1 x count1) / (count2 - count1). Read as a gauge, it would show the
  // whole life of the server, not this run.
  kCumulativeMean,
};

struct SignalRow {
  std::string_view engine;       // "vllm", "sglang", "tgi", "llamacpp", "trtllm"
  std::string_view signal;       // canonical name (kCanonicalSignals)
  SignalRule rule;
  std::string_view name;         // the engine's metric (a histogram's family name)
  std::string_view denominator;  // kCounterRatio only
  double scale = 1;              // e.g. a percentage gauge to a 0..1 ratio
  std::string_view label = {};   // "k=v": only samples with this label (TGI's method="prefill")
};

// Every canonical signal, in the order lines and reports list them.
inline constexpr std::string_view kCanonicalSignals[] = {
    "running",           "waiting",          "kv_usage",        "preemptions",
    "prefix_cache_hit_rate", "prompt_tokens_per_s", "generation_tokens_per_s", "batch_size",
    "tokens_per_step",   "spec_acceptance",  "queue_time_s",    "prefill_time_s",
    "decode_time_s",
};

// The table (engine_signals.cc); rows for one engine and signal are tried in order, the first
// metric the engine exports wins (engines renamed metrics across versions).
const std::vector<SignalRow>& SignalMap();

// Every engine's metric names that give `signal` by `rule`, in table order: for callers that
// read one metric whatever the engine (the probes' running count and generated-token counter).
std::vector<std::string_view> MetricNames(std::string_view signal, SignalRule rule);

// "vllm", "sglang", "tgi", "llamacpp", "trtllm" or "unknown", from the metric names a scrape
// holds. The embedded engine (`infereng serve`) speaks vLLM's names: it is "vllm" here and
// named "infereng" by EngineName.
std::string DetectEngine(const Scrape& scrape);
// "infereng" when the scrape has infereng's own series, else DetectEngine.
std::string EngineName(const Scrape& scrape);

// Turns successive scrapes into lines. The first scrape has no interval: rate, ratio and
// histogram signals start on the second.
class SignalSampler {
 public:
  static constexpr size_t kMaxRawSeries = 64;  // unknown engines: raw series kept per line

  // One line: {"t_s", "engine", "signals": {name: value}, "missing": [...] (first line only),
  // "raw": {...} (unknown engines)}. `t_s`: seconds since the run's t0.
  nlohmann::json Sample(const Scrape& scrape, double t_s);

 private:
  struct Cumulative {
    double value = 0;
    double count = 0;  // histograms: _count (value holds _sum)
  };
  std::optional<double> Evaluate(const SignalRow& row, const Scrape& scrape, double dt_s,
                                 std::map<std::string, Cumulative>& next) const;

  std::string engine_;
  bool first_ = true;
  double last_t_s_ = 0;
  std::map<std::string, Cumulative> last_;  // keyed by row name (+ label); a few dozen entries
};

}  // namespace infereng::client
