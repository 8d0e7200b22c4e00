// The canonical-signal table and sampler (engine_metrics.jsonl lines).
#include "client/engine_signals.h"

#include <gtest/gtest.h>

#include <set>

#include "client/test_fixture.h"

namespace infereng::client {
namespace {

Scrape Parse(const std::string& text) {
  Result<Scrape> s = ParsePrometheusText(text);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? *s : Scrape{};
}

std::string Vllm(double running, double waiting, double kv, double preempt, double prompt, double hits, double queries,
                 double queue_sum, double queue_count) {
  return "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{model_name=\"m\"} " + std::to_string(running) +
         "\n# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting{model_name=\"m\"} " + std::to_string(waiting) +
         "\n# TYPE vllm:kv_cache_usage_perc gauge\nvllm:kv_cache_usage_perc{model_name=\"m\"} " + std::to_string(kv) +
         "\n# TYPE vllm:num_preemptions_total counter\nvllm:num_preemptions_total{model_name=\"m\"} " +
         std::to_string(preempt) + "\n# TYPE vllm:prompt_tokens_total counter\nvllm:prompt_tokens_total " +
         std::to_string(prompt) + "\nvllm:prefix_cache_hits_total " + std::to_string(hits) +
         "\nvllm:prefix_cache_queries_total " + std::to_string(queries) +
         "\n# TYPE vllm:request_queue_time_seconds histogram\n"
         "vllm:request_queue_time_seconds_bucket{le=\"1\"} " + std::to_string(queue_count) +
         "\nvllm:request_queue_time_seconds_bucket{le=\"+Inf\"} " + std::to_string(queue_count) +
         "\nvllm:request_queue_time_seconds_sum " + std::to_string(queue_sum) +
         "\nvllm:request_queue_time_seconds_count " + std::to_string(queue_count) + "\n";
}

TEST(EngineSignals, VllmGaugesNowCountersOverTheInterval) {
  SignalSampler sampler;
  nlohmann::json first = sampler.Sample(Parse(Vllm(2, 5, 0.5, 1, 1000, 10, 100, 1.0, 4)), 1.0);
  EXPECT_EQ(first["engine"], "vllm");
  EXPECT_DOUBLE_EQ(first["signals"]["running"].get<double>(), 2);
  EXPECT_DOUBLE_EQ(first["signals"]["waiting"].get<double>(), 5);
  EXPECT_DOUBLE_EQ(first["signals"]["kv_usage"].get<double>(), 0.5);
  EXPECT_FALSE(first["signals"].contains("prompt_tokens_per_s")) << "no interval yet";
  EXPECT_FALSE(first["signals"].contains("preemptions"));
  // Not exported by this engine: listed once.
  std::set<std::string> missing(first["missing"].begin(), first["missing"].end());
  EXPECT_TRUE(missing.count("decode_time_s"));
  EXPECT_FALSE(missing.count("waiting"));

  nlohmann::json second = sampler.Sample(Parse(Vllm(3, 9, 0.97, 4, 3000, 40, 200, 3.0, 8)), 3.0);
  EXPECT_FALSE(second.contains("missing"));
  EXPECT_DOUBLE_EQ(second["signals"]["prompt_tokens_per_s"].get<double>(), 1000);  // 2000 tokens / 2 s
  EXPECT_DOUBLE_EQ(second["signals"]["preemptions"].get<double>(), 3);
  EXPECT_DOUBLE_EQ(second["signals"]["prefix_cache_hit_rate"].get<double>(), 0.3);  // 30 / 100
  EXPECT_DOUBLE_EQ(second["signals"]["queue_time_s"].get<double>(), 0.5);           // 2 s / 4 requests
}

TEST(EngineSignals, EmbeddedEngineIsVllmNamedInfereng) {
  Scrape s = Parse("vllm:num_requests_waiting 1\ninfereng:requests_rejected_total 0\n");
  EXPECT_EQ(DetectEngine(s), "vllm");
  EXPECT_EQ(EngineName(s), "infereng");
}

TEST(EngineSignals, OlderVllmNameIsTheFallback) {
  SignalSampler sampler;
  nlohmann::json line = sampler.Sample(Parse("vllm:gpu_cache_usage_perc 0.25\n"), 1);
  EXPECT_DOUBLE_EQ(line["signals"]["kv_usage"].get<double>(), 0.25);
}

TEST(EngineSignals, LlamaCppAndTgiAndSglang) {
  {
    SignalSampler sampler;
    nlohmann::json l = sampler.Sample(Parse("llamacpp:requests_processing 2\nllamacpp:requests_deferred 7\n"), 1);
    EXPECT_EQ(l["engine"], "llamacpp");
    EXPECT_DOUBLE_EQ(l["signals"]["waiting"].get<double>(), 7);
    EXPECT_DOUBLE_EQ(l["signals"]["running"].get<double>(), 2);
  }
  {
    SignalSampler sampler;
    nlohmann::json l = sampler.Sample(Parse("tgi_queue_size 3\ntgi_batch_current_size 16\n"), 1);
    EXPECT_EQ(l["engine"], "tgi");
    EXPECT_DOUBLE_EQ(l["signals"]["waiting"].get<double>(), 3);
    EXPECT_DOUBLE_EQ(l["signals"]["batch_size"].get<double>(), 16);
  }
  {
    SignalSampler sampler;
    nlohmann::json l = sampler.Sample(Parse("sglang:num_queue_reqs 4\nsglang:token_usage 0.9\nsglang:cache_hit_rate 0.1\n"), 1);
    EXPECT_EQ(l["engine"], "sglang");
    EXPECT_DOUBLE_EQ(l["signals"]["kv_usage"].get<double>(), 0.9);
    EXPECT_DOUBLE_EQ(l["signals"]["prefix_cache_hit_rate"].get<double>(), 0.1);
  }
}

TEST(EngineSignals, TgiPrefillRowReadsOnlyItsLabel) {
  const char* a =
      "# TYPE tgi_batch_forward_duration histogram\n"
      "tgi_batch_forward_duration_bucket{method=\"prefill\",le=\"+Inf\"} 1\ntgi_batch_forward_duration_sum{method=\"prefill\"} 0.1\n"
      "tgi_batch_forward_duration_count{method=\"prefill\"} 1\n"
      "tgi_batch_forward_duration_bucket{method=\"decode\",le=\"+Inf\"} 10\ntgi_batch_forward_duration_sum{method=\"decode\"} 0.1\n"
      "tgi_batch_forward_duration_count{method=\"decode\"} 10\ntgi_queue_size 0\n";
  const char* b =
      "# TYPE tgi_batch_forward_duration histogram\n"
      "tgi_batch_forward_duration_bucket{method=\"prefill\",le=\"+Inf\"} 3\ntgi_batch_forward_duration_sum{method=\"prefill\"} 0.5\n"
      "tgi_batch_forward_duration_count{method=\"prefill\"} 3\n"
      "tgi_batch_forward_duration_bucket{method=\"decode\",le=\"+Inf\"} 110\ntgi_batch_forward_duration_sum{method=\"decode\"} 1.1\n"
      "tgi_batch_forward_duration_count{method=\"decode\"} 110\ntgi_queue_size 0\n";
  SignalSampler sampler;
  sampler.Sample(Parse(a), 1);
  nlohmann::json l = sampler.Sample(Parse(b), 2);
  EXPECT_DOUBLE_EQ(l["signals"]["prefill_time_s"].get<double>(), 0.2);  // 0.4 s / 2 prefill batches
}

TEST(EngineSignals, UnknownEngineKeepsRawSeriesAndListsEverySignalMissing) {
  SignalSampler sampler;
  nlohmann::json l = sampler.Sample(Parse("myengine_queue{shard=\"a\"} 2\nmyengine_queue{shard=\"b\"} 3\n"), 1);
  EXPECT_EQ(l["engine"], "unknown");
  EXPECT_EQ(l["missing"].size(), std::size(kCanonicalSignals));
  EXPECT_DOUBLE_EQ(l["raw"]["myengine_queue"].get<double>(), 5);
}

TEST(EngineSignals, EngineRestartCountsFromZero) {
  SignalSampler sampler;
  sampler.Sample(Parse("vllm:prompt_tokens_total 5000\n"), 1);
  nlohmann::json l = sampler.Sample(Parse("vllm:prompt_tokens_total 300\n"), 2);
  EXPECT_DOUBLE_EQ(l["signals"]["prompt_tokens_per_s"].get<double>(), 300);
}

// The real llama.cpp b4748 capture (testdata/llamacpp-b4748/metrics.txt) maps.
TEST(EngineSignals, LlamaCppCaptureMaps) {
  testing::CapturedResponse cap = testing::LoadCapture("metrics.txt");
  SignalSampler sampler;
  nlohmann::json l = sampler.Sample(Parse(cap.body), 1);
  EXPECT_EQ(l["engine"], "llamacpp");
  EXPECT_DOUBLE_EQ(l["signals"]["waiting"].get<double>(), 0);  // llamacpp:requests_deferred
  // n_busy_slots_per_decode 2.95685 is the mean since the server started: no interval yet.
  EXPECT_FALSE(l["signals"].contains("batch_size"));
  EXPECT_TRUE(l["signals"].contains("running"));
  std::set<std::string> missing(l["missing"].begin(), l["missing"].end());
  EXPECT_TRUE(missing.count("preemptions"));
  EXPECT_TRUE(missing.count("queue_time_s"));
}

// llama.cpp's n_busy_slots_per_decode is n_busy_slots_total / n_decode_total since the server
// started (b4748). Read as a gauge, a run of 4-slot batches on a server that served years of
// batch-1 traffic would read ~1. The interval's mean is what the run did.
TEST(EngineSignals, LlamaCppBatchSizeIsTheIntervalsMean) {
  SignalSampler sampler;
  // 1000 decodes at 1 busy slot before the run...
  sampler.Sample(Parse("llamacpp:n_decode_total 1000\nllamacpp:n_busy_slots_per_decode 1\n"), 1);
  // ...then 100 decodes at 4 busy slots: lifetime mean (1000 + 400) / 1100 = 1.2727.
  nlohmann::json l = sampler.Sample(
      Parse("llamacpp:n_decode_total 1100\nllamacpp:n_busy_slots_per_decode 1.27273\n"), 2);
  EXPECT_NEAR(l["signals"]["batch_size"].get<double>(), 4.0, 0.01);
  // No decode in the next interval: no batch size (idle, not "1.27").
  nlohmann::json idle = sampler.Sample(
      Parse("llamacpp:n_decode_total 1100\nllamacpp:n_busy_slots_per_decode 1.27273\n"), 3);
  EXPECT_FALSE(idle["signals"].contains("batch_size"));
}

TEST(EngineSignals, EveryRowNamesACanonicalSignal) {
  std::set<std::string_view> canonical(std::begin(kCanonicalSignals), std::end(kCanonicalSignals));
  for (const SignalRow& row : SignalMap()) {
    EXPECT_TRUE(canonical.count(row.signal)) << row.engine << " " << row.name;
    const bool two_metrics = row.rule == SignalRule::kCounterRatio || row.rule == SignalRule::kCumulativeMean;
    EXPECT_EQ(two_metrics, !row.denominator.empty()) << row.name;
  }
}

}  // namespace
}  // namespace infereng::client
