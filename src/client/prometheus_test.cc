#include "client/prometheus.h"

#include <cmath>

#include <gtest/gtest.h>

#include "client/test_fixture.h"

namespace infereng::client {
namespace {

constexpr const char* kVllmSample = R"(# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 12.0
# HELP vllm:num_requests_waiting Number of requests waiting to be processed.
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 3.0
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 0.4375
# TYPE vllm:num_preemptions_total counter
vllm:num_preemptions_total{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 2.0
# TYPE vllm:request_success_total counter
vllm:request_success_total{engine="0",finished_reason="stop",model_name="meta-llama/Llama-3.1-8B-Instruct"} 90.0
vllm:request_success_total{engine="0",finished_reason="length",model_name="meta-llama/Llama-3.1-8B-Instruct"} 10.0
# HELP vllm:time_to_first_token_seconds Histogram of time to first token in seconds.
# TYPE vllm:time_to_first_token_seconds histogram
vllm:time_to_first_token_seconds_bucket{engine="0",le="0.01",model_name="meta-llama/Llama-3.1-8B-Instruct"} 0.0
vllm:time_to_first_token_seconds_bucket{engine="0",le="0.1",model_name="meta-llama/Llama-3.1-8B-Instruct"} 50.0
vllm:time_to_first_token_seconds_bucket{engine="0",le="1.0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 90.0
vllm:time_to_first_token_seconds_bucket{engine="0",le="+Inf",model_name="meta-llama/Llama-3.1-8B-Instruct"} 100.0
vllm:time_to_first_token_seconds_count{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 100.0
vllm:time_to_first_token_seconds_sum{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 23.5
# TYPE tgi_batch_forward_duration histogram
tgi_batch_forward_duration_bucket{method="decode",le="0.05"} 4
tgi_batch_forward_duration_bucket{method="decode",le="+Inf"} 5 1700000000000
tgi_batch_forward_duration_bucket{method="prefill",le="0.05"} 1
tgi_batch_forward_duration_bucket{method="prefill",le="+Inf"} 2
weird{path="a\"b\\c\nd"} NaN
)";

TEST(Prometheus, LlamaCppFixture) {
  auto cap = testing::LoadCapture("metrics.txt");
  ASSERT_FALSE(cap.body.empty());
  auto scrape = ParsePrometheusText(cap.body);
  ASSERT_TRUE(scrape.ok()) << scrape.status().ToString();
  EXPECT_EQ(scrape->samples().size(), 12u);
  EXPECT_EQ(scrape->Value("llamacpp:prompt_tokens_total"), 20448);
  EXPECT_EQ(scrape->Value("llamacpp:tokens_predicted_total"), 4247);
  EXPECT_DOUBLE_EQ(*scrape->Value("llamacpp:prompt_seconds_total"), 65.902);
  EXPECT_EQ(scrape->Value("llamacpp:requests_deferred"), 0);
  EXPECT_EQ(scrape->TypeOf("llamacpp:requests_processing"), MetricType::kGauge);
  EXPECT_EQ(scrape->TypeOf("llamacpp:n_decode_total"), MetricType::kCounter);
  EXPECT_EQ(scrape->families().at("llamacpp:n_decode_total").help, "Total number of llama_decode() calls");
  EXPECT_FALSE(scrape->Value("vllm:num_requests_running").has_value());
}

TEST(Prometheus, VllmStyleLabelsCountersAndHistograms) {
  auto scrape = ParsePrometheusText(kVllmSample);
  ASSERT_TRUE(scrape.ok()) << scrape.status().ToString();
  EXPECT_EQ(scrape->Value("vllm:num_requests_running"), 12);
  EXPECT_EQ(scrape->FirstValue({"vllm:gpu_cache_usage_perc", "vllm:kv_cache_usage_perc"}), 0.4375);
  EXPECT_EQ(scrape->Value("vllm:request_success_total"), 100);  // summed over label sets
  EXPECT_EQ(scrape->Value("vllm:request_success_total", {{"finished_reason", "length"}}), 10);
  EXPECT_EQ(scrape->TypeOf("vllm:time_to_first_token_seconds_bucket"), MetricType::kHistogram);

  auto ttft = scrape->Histogram("vllm:time_to_first_token_seconds");
  ASSERT_TRUE(ttft.ok());
  EXPECT_EQ(ttft->count, 100);
  EXPECT_DOUBLE_EQ(ttft->Mean(), 0.235);
  ASSERT_EQ(ttft->buckets.size(), 4u);
  EXPECT_TRUE(std::isinf(ttft->buckets.back().first));
  EXPECT_NEAR(ttft->Quantile(0.5), 0.1, 1e-12);             // exactly at the 0.1 bucket edge
  EXPECT_NEAR(ttft->Quantile(0.7), 0.1 + 0.9 * 0.5, 1e-12);  // halfway through (0.1, 1.0]
  EXPECT_NEAR(ttft->Quantile(0.95), 1.0, 1e-12);             // in +Inf: the highest finite bound

  auto decode = scrape->Histogram("tgi_batch_forward_duration", {{"method", "decode"}});
  ASSERT_TRUE(decode.ok());
  EXPECT_EQ(decode->count, 5);  // no _count sample: taken from the +Inf bucket
  EXPECT_EQ(scrape->samples()[scrape->samples().size() - 4].timestamp_ms, 1700000000000);
  EXPECT_EQ(scrape->Histogram("nope").status().code(), Status::Code::kNotFound);

  const Sample& weird = scrape->samples().back();
  EXPECT_TRUE(std::isnan(weird.value));
  EXPECT_EQ(weird.LabelValue("path"), "a\"b\\c\nd");
}

TEST(Prometheus, CounterAndHistogramDeltasBetweenScrapes) {
  auto before = ParsePrometheusText("c_total 10\nh_bucket{le=\"1\"} 1\nh_bucket{le=\"+Inf\"} 2\nh_sum 3\nh_count 2\n");
  auto after = ParsePrometheusText("c_total 25\nh_bucket{le=\"1\"} 4\nh_bucket{le=\"+Inf\"} 6\nh_sum 9\nh_count 6\n");
  auto restarted = ParsePrometheusText("c_total 5\n");
  ASSERT_TRUE(before.ok() && after.ok() && restarted.ok());
  EXPECT_EQ(CounterDelta(*before, *after, "c_total"), 15);
  EXPECT_EQ(CounterDelta(*after, *restarted, "c_total"), 5);
  EXPECT_FALSE(CounterDelta(*before, *after, "missing").has_value());
  auto d = HistogramData::Delta(*after->Histogram("h"), *before->Histogram("h"));
  EXPECT_EQ(d.count, 4);
  EXPECT_EQ(d.sum, 6);
  EXPECT_EQ(d.buckets[0].second, 3);
}

TEST(Prometheus, BadInputNamesTheLine) {
  struct Case { const char* text; const char* why; };
  for (Case c : {Case{"ok 1\nbad{x=\"1\" 2\n", "line 2: expected ',' or '}'"},
                 Case{"bad{x 2\n", "expected '='"},
                 Case{"m{l=\"v} 1\n", "unterminated value"},
                 Case{"m abc\n", "expected a number, got \"abc\""},
                 Case{"m\n", "missing value"},
                 Case{"m 1 2 3\n", "unexpected text"},
                 Case{"9m 1\n", "expected a metric or label name"},
                 Case{"m{le=\"1\"} 1\nm 1 x\n", "line 2"}}) {
    auto r = ParsePrometheusText(c.text);
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument);
    EXPECT_NE(r.status().message().find(c.why), std::string::npos) << r.status().message();
  }
  EXPECT_TRUE(ParsePrometheusText("").ok());
  EXPECT_TRUE(ParsePrometheusText("# just a comment\r\n\r\nm 1\r\n").ok());
}

}  // namespace
}  // namespace infereng::client
