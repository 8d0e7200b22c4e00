// serve::Server: the production behaviours `infereng probe` tests, each both ways —
// Retry-After on refusals, abort-on-disconnect, cold start with an honest or lying /health,
// a buffering proxy's bursts, and the prefix cache shared or salted per tenant.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <thread>

#include "serve/http_test_client.h"
#include "serve/paced_engine.h"
#include "serve/server.h"

namespace infereng::serve {
namespace {

using nlohmann::json;
using testing::SteadyNs;
using testing::TestClient;
using testing::TestResponse;

struct Running {
  Running(ServerOptions opt, PacedEngineOptions eng) {
    opt.port = 0;
    opt.merge_late_tokens = false;
    server = std::make_unique<Server>(opt, std::make_unique<PacedEngine>(eng));
    auto p = server->Start();
    EXPECT_TRUE(p.ok());
    port = p.ok() ? *p : 0;
  }
  static std::string Body(int max_tokens, bool stream, const std::string& prompt = "hello there") {
    return json{{"messages", {{{"role", "user"}, {"content", prompt}}}}, {"max_tokens", max_tokens}, {"stream", stream}}
        .dump();
  }
  int64_t Running_() {  // vllm:num_requests_running from /metrics
    TestClient c(port);
    TestResponse r = c.Call("GET", "/metrics");
    auto at = r.body.find("\nvllm:num_requests_running{");
    if (at == std::string::npos) return -1;
    auto sp = r.body.find("} ", at);
    return std::stoll(r.body.substr(sp + 2));
  }
  std::unique_ptr<Server> server;
  uint16_t port = 0;
};

constexpr PacedEngineOptions kOneSlot{.ttft_base = 2 * kNanosPerMilli, .prefill_per_token = 0,
                                      .itl = 20 * kNanosPerMilli, .max_running = 1};

TEST(ServeBehaviours, RefusalCarriesRetryAfterOnlyWhenConfigured) {
  for (Nanos retry_after : {Nanos{0}, 1500 * kNanosPerMilli}) {
    Running s(ServerOptions{.max_waiting = 1, .retry_after = retry_after}, kOneSlot);
    TestClient running(s.port), waiting(s.port);
    running.SendRequest("POST", "/v1/chat/completions", Running::Body(100, true));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    waiting.SendRequest("POST", "/v1/chat/completions", Running::Body(100, true));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    TestClient third(s.port);
    TestResponse r = third.Call("POST", "/v1/chat/completions", Running::Body(5, false));
    EXPECT_EQ(r.status, 429);
    EXPECT_EQ(json::parse(r.body)["error"]["type"], "overloaded_error");
    EXPECT_EQ(r.Header("Retry-After"), retry_after == 0 ? "" : "2");  // 1.5 s rounds up
  }
}

TEST(ServeBehaviours, DisconnectFreesTheSlotOnlyWithAbortOnDisconnect) {
  for (bool abort : {true, false}) {
    Running s(ServerOptions{.abort_on_disconnect = abort}, kOneSlot);
    {
      TestClient c(s.port);
      c.SendRequest("POST", "/v1/chat/completions", Running::Body(200, true));  // 4 s of tokens
      TestResponse partial = c.Read(3);
      EXPECT_EQ(partial.status, 200);
    }  // the client leaves
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    ServerSnapshot snap = s.server->Snapshot();
    EXPECT_EQ(snap.requests_aborted, 1);
    EXPECT_EQ(snap.requests_orphaned, abort ? 0 : 1);
    EXPECT_EQ(s.Running_(), abort ? 0 : 1) << "abort_on_disconnect " << abort;
  }
}

TEST(ServeBehaviours, ColdStartHealthIsHonestUnlessReadyLies) {
  for (bool lies : {false, true}) {
    ServerOptions o{.ready_lies = lies};
    o.faults.cold_start = 5 * kNanosPerSecond;
    Running s(o, kOneSlot);
    TestClient c(s.port);
    EXPECT_EQ(c.Call("GET", "/health").status, lies ? 200 : 503);
    EXPECT_EQ(c.Call("POST", "/v1/chat/completions", Running::Body(2, false)).status, 503);  // cannot serve yet
  }
}

// The arrival times of the stream's bytes, grouped into bursts (gaps under 5 ms: tokens come
// 10 ms apart, a buffered flush delivers its bytes at once).
int Bursts(const TestResponse& r) {
  int bursts = 0;
  int64_t last = 0;
  for (const auto& [t, data] : r.chunks) {
    if (bursts == 0 || t - last > 5 * kNanosPerMilli) ++bursts;
    last = t;
  }
  return bursts;
}

TEST(ServeBehaviours, StreamBufferHoldsChunksAndFlushesInBursts) {
  constexpr PacedEngineOptions kEng{.ttft_base = 10 * kNanosPerMilli, .prefill_per_token = 0, .itl = 10 * kNanosPerMilli};
  for (Nanos every : {Nanos{0}, 250 * kNanosPerMilli}) {
    Running s(ServerOptions{.stream_buffer = every}, kEng);
    TestClient c(s.port);
    const int64_t t0 = SteadyNs();
    c.SendRequest("POST", "/v1/chat/completions", Running::Body(40, true));  // ~400 ms of tokens
    TestResponse r = c.Read();
    ASSERT_EQ(r.status, 200);
    ASSERT_TRUE(r.complete);
    ASSERT_FALSE(r.chunks.empty());
    EXPECT_NE(r.body.find("[DONE]"), std::string::npos);
    if (every == 0) {
      EXPECT_GE(Bursts(r), 20) << "tokens arrive as generated";
      EXPECT_LT(r.chunks.front().first - t0, 200 * kNanosPerMilli);
    } else {
      EXPECT_LE(Bursts(r), 3) << "held and flushed every 250 ms";
      EXPECT_GE(r.chunks.front().first - t0, 240 * kNanosPerMilli) << "the first byte waits for the first flush";
    }
  }
}

// Cached prompt tokens of a non-streaming answer (usage.prompt_tokens_details).
int CachedTokens(uint16_t port, const std::string& prompt, const std::string& headers, const std::string& salt = "") {
  json body = json::parse(Running::Body(1, false, prompt));
  if (!salt.empty()) body["cache_salt"] = salt;
  TestClient c(port);
  TestResponse r = c.Call("POST", "/v1/chat/completions", body.dump(), headers);
  EXPECT_EQ(r.status, 200) << r.body;
  return r.status == 200 ? json::parse(r.body)["usage"]["prompt_tokens_details"]["cached_tokens"].get<int>() : -1;
}

TEST(ServeBehaviours, PrefixCacheSharedAcrossTenantsOrSaltedPerTenant) {
  std::string prompt;
  for (int i = 0; i < 64; ++i) prompt += "secret" + std::to_string(i) + " ";
  const std::string a = "Authorization: Bearer tenant-a\r\n", b = "Authorization: Bearer tenant-b\r\n";
  {
    Running s(ServerOptions{.cache_isolation = CacheIsolation::kShared}, kOneSlot);
    EXPECT_EQ(CachedTokens(s.port, prompt, a), 0);
    EXPECT_EQ(CachedTokens(s.port, prompt, b), 63) << "tenant B hits tenant A's blocks";
  }
  {
    Running s(ServerOptions{.cache_isolation = CacheIsolation::kPerTenant}, kOneSlot);
    EXPECT_EQ(CachedTokens(s.port, prompt, a), 0);
    EXPECT_EQ(CachedTokens(s.port, prompt, b), 0) << "salted per API key";
    EXPECT_EQ(CachedTokens(s.port, prompt, a), 63) << "a tenant still hits its own blocks";
    EXPECT_EQ(CachedTokens(s.port, prompt, a, "other-salt"), 0) << "cache_salt is part of the tenant";
  }
}

}  // namespace
}  // namespace infereng::serve
