// The engine's view of a run from two /metrics scrapes (summary.json "engine_metrics").
#include "client/engine_metrics.h"

#include <gtest/gtest.h>

namespace infereng::client {
namespace {

Scrape Parse(const char* text) {
  Result<Scrape> s = ParsePrometheusText(text);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? *s : Scrape{};
}

constexpr const char* kBefore = R"(# TYPE vllm:prompt_tokens_total counter
vllm:prompt_tokens_total 100
# TYPE vllm:prefix_cache_queries_total counter
vllm:prefix_cache_queries_total 10
# TYPE vllm:prefix_cache_hits_total counter
vllm:prefix_cache_hits_total 5
# TYPE vllm:time_to_first_token_seconds histogram
vllm:time_to_first_token_seconds_bucket{le="0.1"} 10
vllm:time_to_first_token_seconds_bucket{le="1"} 10
vllm:time_to_first_token_seconds_bucket{le="+Inf"} 10
vllm:time_to_first_token_seconds_sum 0.5
vllm:time_to_first_token_seconds_count 10
)";

constexpr const char* kAfter = R"(# TYPE vllm:prompt_tokens_total counter
vllm:prompt_tokens_total 350
# TYPE vllm:prefix_cache_queries_total counter
vllm:prefix_cache_queries_total 110
# TYPE vllm:prefix_cache_hits_total counter
vllm:prefix_cache_hits_total 30
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting 4
# TYPE vllm:time_to_first_token_seconds histogram
vllm:time_to_first_token_seconds_bucket{le="0.1"} 10
vllm:time_to_first_token_seconds_bucket{le="1"} 30
vllm:time_to_first_token_seconds_bucket{le="+Inf"} 30
vllm:time_to_first_token_seconds_sum 10.5
vllm:time_to_first_token_seconds_count 30
)";

TEST(EngineMetrics, DeltaOfCountersGaugesAndHistogramsOverTheRun) {
  const nlohmann::json j = EngineMetricsDelta(Parse(kBefore), Parse(kAfter));
  EXPECT_DOUBLE_EQ(j["counters_delta"]["vllm:prompt_tokens_total"].get<double>(), 250);
  EXPECT_FALSE(j["counters_delta"].contains("vllm:generation_tokens_total"));  // not exported: left out
  EXPECT_DOUBLE_EQ(j["prefix_cache_hit_rate"].get<double>(), 25.0 / 100.0);
  EXPECT_DOUBLE_EQ(j["gauges_after"]["vllm:num_requests_waiting"].get<double>(), 4);
  const nlohmann::json& ttft = j["histograms_delta"]["vllm:time_to_first_token_seconds"];
  EXPECT_EQ(ttft["count"].get<double>(), 20);            // only the run's requests
  EXPECT_DOUBLE_EQ(ttft["mean_s"].get<double>(), 0.5);   // (10.5 - 0.5) / 20
  EXPECT_GT(ttft["p50_s"].get<double>(), 0.1);           // all 20 fell in (0.1, 1]
  EXPECT_FALSE(j["histograms_delta"].contains("vllm:e2e_request_latency_seconds"));
}

TEST(EngineMetrics, EveryTableEntryIsReadFromTheScrapes) {
  // A metric added to kEngineMetrics appears in the output without other code.
  auto exposition = [](int v) {
    const std::string n = std::to_string(v);
    std::string text;
    for (const EngineMetric& m : kEngineMetrics) {
      const std::string name(m.name);
      switch (m.kind) {
        case EngineMetricKind::kCounter: text += "# TYPE " + name + " counter\n" + name + " " + n + "\n"; break;
        case EngineMetricKind::kGauge: text += "# TYPE " + name + " gauge\n" + name + " " + n + "\n"; break;
        case EngineMetricKind::kHistogram:
          text += "# TYPE " + name + " histogram\n" + name + "_bucket{le=\"+Inf\"} " + n + "\n" + name + "_sum " + n +
                  "\n" + name + "_count " + n + "\n";
          break;
      }
    }
    return text;
  };
  const nlohmann::json j = EngineMetricsDelta(Parse(exposition(0).c_str()), Parse(exposition(1).c_str()));
  for (const EngineMetric& m : kEngineMetrics) {
    const char* section = m.kind == EngineMetricKind::kCounter ? "counters_delta"
                          : m.kind == EngineMetricKind::kGauge ? "gauges_after"
                                                               : "histograms_delta";
    EXPECT_TRUE(j[section].contains(std::string(m.name))) << m.name;
  }
}

}  // namespace
}  // namespace infereng::client
