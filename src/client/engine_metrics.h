// The engine's own view of a run, from two scrapes of its /metrics (before and after):
// counter growth, gauges at the end and the server-side latency histograms over the run.
// The metric names it reads are in one table (kEngineMetrics, vLLM names; docs/engines.md
// §3), so adding a metric is one line. The JSON is summary.json's "engine_metrics"
// (docs/results-schema.md).
#pragma once

#include <string_view>

#include <nlohmann/json.hpp>

#include "client/prometheus.h"

namespace infereng::client {

enum class EngineMetricKind { kCounter, kGauge, kHistogram };

struct EngineMetric {
  std::string_view name;
  EngineMetricKind kind;
};

// Every metric EngineMetricsDelta reads, in the order it writes them.
inline constexpr EngineMetric kEngineMetrics[] = {
    {"vllm:prompt_tokens_total", EngineMetricKind::kCounter},
    {"vllm:generation_tokens_total", EngineMetricKind::kCounter},
    {"vllm:num_preemptions_total", EngineMetricKind::kCounter},
    {"vllm:prefix_cache_queries_total", EngineMetricKind::kCounter},
    {"vllm:prefix_cache_hits_total", EngineMetricKind::kCounter},
    {"vllm:request_success_total", EngineMetricKind::kCounter},
    {"vllm:num_requests_running", EngineMetricKind::kGauge},
    {"vllm:num_requests_waiting", EngineMetricKind::kGauge},
    {"vllm:kv_cache_usage_perc", EngineMetricKind::kGauge},
    {"vllm:time_to_first_token_seconds", EngineMetricKind::kHistogram},
    {"vllm:inter_token_latency_seconds", EngineMetricKind::kHistogram},
    {"vllm:e2e_request_latency_seconds", EngineMetricKind::kHistogram},
    {"vllm:request_queue_time_seconds", EngineMetricKind::kHistogram},
};

// {"counters_delta": {...}, "gauges_after": {...}, "histograms_delta": {NAME: {count,
// mean_s, p50_s, p99_s}}, "prefix_cache_hit_rate": x (when the engine counts queries)}.
// Metrics the engine does not export are left out.
nlohmann::json EngineMetricsDelta(const Scrape& before, const Scrape& after);

}  // namespace infereng::client
