// ProbeClient::Gauge against engines other than vLLM: the probes read the running count and
// the generated-token counter whatever names the engine exports (client::MetricNames).
#include "job/probe_client.h"

#include <gtest/gtest.h>

#include "client/test_fixture.h"
#include "client/test_server.h"

namespace infereng::job {
namespace {

// Serves a recorded /metrics response verbatim.
client::testing::ScriptedServer MetricsServer(std::string raw) {
  return client::testing::ScriptedServer(
      [raw = std::move(raw)](const auto&, client::testing::Exchange& ex) { ex.Write(raw); });
}

// llama.cpp b4748 names its running count llamacpp:requests_processing: before the fix the
// probe asked only for vllm:num_requests_running and the cancellation probe said "n/a: no
// running count in /metrics" against a real llama-server (docs/probe.md, llama.cpp verdicts).
TEST(ProbeClientGauge, ReadsLlamaCppNames) {
  client::testing::CapturedResponse cap = client::testing::LoadCapture("metrics.txt");
  auto server = MetricsServer(cap.raw);
  client::ClientOptions copt;
  copt.base_url = server.url();
  ProbeClient c(copt, ProbeBudget{.max_requests = 10, .max_time = 10 * kNanosPerSecond});
  auto running = c.Gauge();
  ASSERT_TRUE(running.ok()) << running.status().ToString();
  ASSERT_TRUE(running->has_value()) << "llamacpp:requests_processing";
  EXPECT_DOUBLE_EQ(**running, 0);
  auto tokens = c.Gauge(ProbeClient::GeneratedTokenCounters());
  ASSERT_TRUE(tokens.ok() && tokens->has_value()) << "llamacpp:tokens_predicted_total";
  EXPECT_DOUBLE_EQ(**tokens, 4247);
}

TEST(ProbeClientGauge, VllmNamesStillFirstAndUnknownIsNullopt) {
  auto vllm = MetricsServer(
      "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 30\r\n\r\nvllm:num_requests_running 3.0\n");
  client::ClientOptions copt;
  copt.base_url = vllm.url();
  ProbeClient c(copt, ProbeBudget{.max_requests = 10, .max_time = 10 * kNanosPerSecond});
  auto running = c.Gauge();
  ASSERT_TRUE(running.ok() && running->has_value());
  EXPECT_DOUBLE_EQ(**running, 3);
  auto none = c.Gauge({"no_such_metric"});
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
}

}  // namespace
}  // namespace infereng::job
