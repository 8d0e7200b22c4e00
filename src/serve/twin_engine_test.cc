// serve driven by the real twin with a fixed (linear) cost model: what a client measures
// over HTTP must match the twin's schedule, and the twin's prefix cache shows in usage.
#include "serve/twin_engine.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "serve/http_test_client.h"
#include "serve/server.h"
#include "twin/cost_model.h"
#include "twin/front_end.h"

namespace infereng::serve {
namespace {

using nlohmann::json;
using testing::TestClient;

std::unique_ptr<Server> StartTwin(double step_s, uint16_t* port, int64_t max_waiting = 1024, double preprocess_s = 0) {
  twin::TwinSettings settings;
  settings.engine.kv_cache_tokens = 1 << 16;
  settings.engine.max_model_len = 8192;
  twin::LinearCostOptions cost;
  cost.fixed_s = step_s;
  cost.per_prefill_token_s = 0;
  twin::TwinSetup setup = twin::ManualTwin(settings, std::make_shared<twin::LinearCostModel>(cost));
  setup.front_end.preprocess_s = preprocess_s;
  auto engine = MakeTwinEngine(setup);
  EXPECT_TRUE(engine.ok()) << engine.status().ToString();
  ServerOptions opt;
  opt.port = 0;
  opt.max_waiting = max_waiting;
  opt.merge_late_tokens = false;  // tests count chunks
  auto server = std::make_unique<Server>(opt, std::move(engine).value());
  auto p = server->Start();
  EXPECT_TRUE(p.ok());
  *port = p.ok() ? *p : 0;
  return server;
}

// The twin's front end in the embedded engine (twin/front_end.h), in engine time, against
// hand-computed values: the request reaches the twin 10 + 4/2 = 12 ms after Submit; its
// first (prefill) step ends 25 ms later; each token and the finish reach the server
// 3 + 4/2 = 5 ms after the twin made them. Scheduling is reported at once (the server's
// queue timing starts when the twin saw the request: InboundDelay).
TEST(ServeTwin, FrontEndDelaysArrivalAndEveryEmission) {
  twin::TwinSettings settings;
  settings.engine.kv_cache_tokens = 1 << 16;
  settings.engine.max_model_len = 8192;
  twin::TwinSetup setup = twin::ManualTwin(
      settings, std::make_shared<twin::LinearCostModel>(twin::LinearCostOptions{.fixed_s = 0.025, .per_prefill_token_s = 0}));
  setup.front_end.preprocess_s = 0.010;
  setup.front_end.network_s = 0.004;
  setup.front_end.postprocess_s = 0.003;
  auto port = MakeTwinEngine(setup);
  ASSERT_TRUE(port.ok());
  EnginePort& e = **port;
  EXPECT_EQ(e.InboundDelay(), 12 * kNanosPerMilli);
  EXPECT_EQ(e.OutboundDelay(), 5 * kNanosPerMilli);
  struct Rec final : EngineSink {
    std::vector<std::pair<char, Nanos>> ev;
    void OnScheduled(uint64_t, Nanos t) override { ev.emplace_back('s', t); }
    void OnTokens(uint64_t, Nanos t, int32_t, int32_t) override { ev.emplace_back('t', t); }
    void OnFinished(uint64_t, Nanos t, EngineFinish f) override { ev.emplace_back(f == EngineFinish::kLength ? 'f' : 'x', t); }
  } sink;
  EngineRequest req;
  req.id = 1;
  req.prompt_tokens = 8;
  req.output_tokens = 3;
  ASSERT_TRUE(e.Submit(req, 0).ok());
  // Too long for max_model_len: refused at once (a 400), not after the front end.
  req.id = 2;
  req.prompt_tokens = 9000;
  EXPECT_FALSE(e.Submit(req, 0).ok());
  int guard = 0;
  while (auto next = e.NextEventTime()) {
    e.AdvanceTo(*next, sink);
    ASSERT_LT(++guard, 100);
  }
  const Nanos ms = kNanosPerMilli;
  const std::vector<std::pair<char, Nanos>> want = {
      {'s', 12 * ms}, {'t', 42 * ms}, {'t', 67 * ms}, {'t', 92 * ms}, {'f', 92 * ms}};
  EXPECT_EQ(sink.ev, want);
}

TEST(ServeTwin, ClientSeesOneTokenPerEngineStep) {
  uint16_t port = 0;
  auto server = StartTwin(0.025, &port);
  TestClient c(port);
  const int64_t t_send = testing::SteadyNs();
  c.SendRequest("POST", "/v1/completions", json({{"prompt", "a b c d"}, {"max_tokens", 10}, {"stream", true}}).dump());
  auto r = c.Read();
  ASSERT_EQ(r.status, 200);
  ASSERT_EQ(r.chunks.size(), 11u);  // 10 tokens + [DONE]
  // First token at the end of the first (prefill) step, then one token per 25 ms step. The
  // first token cannot come before that step ends; how late it may come depends on the
  // machine (connect, parse; ASan and a loaded 2-core machine add tens of ms), so its upper
  // bound is loose and the schedule is checked on the gaps below.
  const double first_ms = static_cast<double>(r.chunks[0].first - t_send) / 1e6;
  EXPECT_GE(first_ms, 24);
  EXPECT_LT(first_ms, 25 + 200);
  std::vector<double> gaps;
  for (std::size_t i = 1; i < 10; ++i) gaps.push_back(static_cast<double>(r.chunks[i].first - r.chunks[i - 1].first) / 1e6);
  std::sort(gaps.begin(), gaps.end());
  EXPECT_NEAR(gaps[gaps.size() / 2], 25, 5);
  double total = static_cast<double>(r.chunks[9].first - r.chunks[0].first) / 1e6;
  EXPECT_NEAR(total, 9 * 25, 25);  // no drift over the stream
}

void ExpectSharedSystemPromptHitsTheCache(double preprocess_s) {
  uint16_t port = 0;
  auto server = StartTwin(0.002, &port, 1024, preprocess_s);
  std::string system;
  for (int i = 0; i < 48; ++i) system += "s" + std::to_string(i) + " ";
  auto ask = [&](const std::string& q) {
    TestClient c(port);
    auto r = c.Call("POST", "/v1/completions", json({{"prompt", system + q}, {"max_tokens", 2}}).dump());
    EXPECT_EQ(r.status, 200) << r.body;
    return json::parse(r.body)["usage"];
  };
  EXPECT_EQ(ask("first question here")["prompt_tokens_details"]["cached_tokens"], 0);
  json u = ask("second one");
  EXPECT_EQ(u["prompt_tokens"], 50);
  EXPECT_EQ(u["prompt_tokens_details"]["cached_tokens"], 48);  // three full 16-token blocks
  TestClient m(port);
  std::string metrics = m.Call("GET", "/metrics").body;
  EXPECT_NE(metrics.find("vllm:prefix_cache_hits_total{model_name=\"infereng-twin\"} 48"), std::string::npos) << metrics;
}

TEST(ServeTwin, SharedSystemPromptIsServedFromTheTwinsPrefixCache) { ExpectSharedSystemPromptHitsTheCache(0); }

// A request waiting in the front end keeps its block hashes (the server's copy is gone once
// Submit returns; the delay line held a dangling view of them, so the engine hashed garbage
// and a trace replay's hit rate fell from 0.47 to 0.32).
TEST(ServeTwin, SharedSystemPromptHitsTheCacheThroughTheFrontEnd) { ExpectSharedSystemPromptHitsTheCache(0.005); }

// The twin's own clock in the response's `timings`: an idle twin schedules a request at
// once (queue 0), its prefill is the first 20 ms step (first token at its end) and decode
// one step per further token.
TEST(ServeTwin, TimingsComeFromTheTwinsClock) {
  uint16_t port = 0;
  auto server = StartTwin(0.020, &port);
  TestClient c(port);
  auto r = c.Call("POST", "/v1/completions", json({{"prompt", "a b c d"}, {"max_tokens", 4}}).dump());
  ASSERT_EQ(r.status, 200) << r.body;
  json t = json::parse(r.body)["timings"];
  ASSERT_TRUE(t.is_object()) << r.body;
  EXPECT_LT(t["queue_ms"].get<double>(), 1);
  EXPECT_NEAR(t["prompt_ms"].get<double>(), 20, 1e-3);
  EXPECT_NEAR(t["predicted_ms"].get<double>(), 3 * 20, 1e-3);
  EXPECT_EQ(t["prompt_n"], 4);
  EXPECT_EQ(t["predicted_n"], 4);
}

TEST(ServeTwin, TooLongForTheContextIs400) {
  uint16_t port = 0;
  auto server = StartTwin(0.002, &port);
  TestClient c(port);
  auto r = c.Call("POST", "/v1/completions", json({{"prompt", "a b"}, {"max_tokens", 9000}}).dump());
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.find("maximum context length is 8192"), std::string::npos) << r.body;
}

}  // namespace
}  // namespace infereng::serve
