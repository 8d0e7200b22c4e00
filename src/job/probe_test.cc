// The probes against the embedded engine (serve::Server + PacedEngine on 127.0.0.1),
// each configured to pass and to fail; evidence checked against the server's own counters.
#include "job/probe.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

#include "serve/paced_engine.h"
#include "serve/server.h"
#include "testing/paths.h"

namespace infereng::job {
namespace {

constexpr Nanos kMs = kNanosPerMilli;

struct Engine {
  Engine(serve::ServerOptions so, serve::PacedEngineOptions eo) {
    so.port = 0;
    so.merge_late_tokens = false;
    server = std::make_unique<serve::Server>(so, std::make_unique<serve::PacedEngine>(eo));
    auto p = server->Start();
    EXPECT_TRUE(p.ok());
    url = "http://127.0.0.1:" + std::to_string(p.ok() ? *p : 0);
  }
  std::unique_ptr<serve::Server> server;
  std::string url;
};

ProbeSuiteOptions Suite(const std::string& url, std::vector<std::string> only) {
  ProbeSuiteOptions o;
  o.target = url;
  o.client.base_url = url;
  o.client.connect_timeout = 2 * kNanosPerSecond;
  o.only = std::move(only);
  o.settings.output_tokens = 8;
  o.settings.health_backoff = 500 * kMs;
  return o;
}

ProbeResult RunOne(const ProbeSuiteOptions& o) {
  auto out = RunProbeSuite(o);
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  if (!out.ok() || out->results.size() != 1) {
    ADD_FAILURE() << "expected one result";
    return {};
  }
  EXPECT_TRUE(out->error.ok()) << out->error.ToString();
  const ProbeResult& r = out->results.front();
  EXPECT_LE(r.requests, [&] {
    for (const ProbeSpec& p : ProbeTable()) if (p.name == r.name) return p.budget.max_requests;
    return int64_t{0};
  }());
  return r;
}

std::string Describe(const ProbeResult& r) { return ToJson(r).dump(1); }

constexpr serve::PacedEngineOptions kFourSlots{.ttft_base = 5 * kMs, .prefill_per_token = 0, .itl = 5 * kMs,
                                               .max_running = 4};

TEST(ProbeOverload, UnboundedQueueFailsBoundedSheddingPasses) {
  {
    Engine e(serve::ServerOptions{.max_waiting = 0}, kFourSlots);
    ProbeResult r = RunOne(Suite(e.url, {"overload"}));
    EXPECT_EQ(r.verdict, Verdict::kFail) << Describe(r);
    EXPECT_EQ(r.Get("refused"), 0);
    EXPECT_GT(r.Get("ttft_growth"), 4) << Describe(r);
    EXPECT_EQ(e.server->Snapshot().requests_rejected, 0);
  }
  {
    Engine e(serve::ServerOptions{.max_waiting = 4, .retry_after = kNanosPerSecond}, kFourSlots);
    ProbeResult r = RunOne(Suite(e.url, {"overload"}));
    EXPECT_EQ(r.verdict, Verdict::kPass) << Describe(r);
    EXPECT_GT(r.Get("refused"), 0);
    EXPECT_EQ(r.Get("refused"), e.server->Snapshot().requests_rejected) << "the probe counts what the engine refused";
    EXPECT_EQ(r.Get("refused_with_retry_after"), r.Get("refused"));
    EXPECT_GE(r.Get("recovery_ms"), 0);
  }
  {
    Engine e(serve::ServerOptions{.max_waiting = 4}, kFourSlots);  // sheds, but no Retry-After
    ProbeResult r = RunOne(Suite(e.url, {"overload"}));
    EXPECT_EQ(r.verdict, Verdict::kFail) << Describe(r);
    EXPECT_NE(r.finding.find("Retry-After"), std::string::npos) << r.finding;
  }
}

TEST(ProbeCancellation, OrphanedStreamsFailAbortedOnesPass) {
  constexpr serve::PacedEngineOptions kEng{.ttft_base = 5 * kMs, .prefill_per_token = 0, .itl = 10 * kMs};
  for (bool abort : {true, false}) {
    Engine e(serve::ServerOptions{.abort_on_disconnect = abort}, kEng);
    ProbeResult r = RunOne(Suite(e.url, {"cancellation"}));
    EXPECT_EQ(r.verdict, abort ? Verdict::kPass : Verdict::kFail) << Describe(r);
    EXPECT_EQ(r.Get("streams_cancelled"), 4);
    serve::ServerSnapshot snap = e.server->Snapshot();
    EXPECT_EQ(snap.requests_aborted, 4);
    EXPECT_EQ(r.Get("running_after"), static_cast<double>(snap.requests_orphaned)) << Describe(r);
    if (!abort) {
      EXPECT_GT(r.Get("tokens_generated_after_cancel_300ms"), 0);
    }
  }
}

TEST(ProbeStreaming, BufferingProxyFailsDirectStreamPasses) {
  constexpr serve::PacedEngineOptions kEng{.ttft_base = 5 * kMs, .prefill_per_token = 0, .itl = 8 * kMs};
  for (Nanos buffer : {Nanos{0}, 150 * kMs}) {
    Engine e(serve::ServerOptions{.stream_buffer = buffer}, kEng);
    ProbeResult r = RunOne(Suite(e.url, {"streaming"}));
    EXPECT_EQ(r.verdict, buffer == 0 ? Verdict::kPass : Verdict::kFail) << Describe(r);
    EXPECT_EQ(r.Get("saw_done"), 1);
    EXPECT_EQ(r.Get("usage_completion_tokens"), static_cast<double>(e.server->Snapshot().tokens_emitted));
    if (buffer == 0) {
      EXPECT_EQ(r.Get("chunks"), r.Get("usage_completion_tokens")) << "one chunk per token";
    }
    if (buffer != 0) {
      EXPECT_GE(r.Get("first_byte_ms"), 140) << Describe(r);
    }
  }
}

TEST(ProbeLimits, FourXxEverywherePassesAnAcceptedOverContextPromptFails) {
  {
    Engine e(serve::ServerOptions{}, kFourSlots);
    ProbeResult r = RunOne(Suite(e.url, {"limits"}));
    EXPECT_EQ(r.verdict, Verdict::kPass) << Describe(r);
    EXPECT_EQ(r.Get("malformed_json_status"), 400);
    EXPECT_EQ(r.Get("unknown_model_status"), 404);
  }
  {
    // A context the probe cannot exceed within its request size: the prompt is accepted.
    serve::ServerOptions so{.max_model_len = int64_t{1} << 40};
    Engine e(so, serve::PacedEngineOptions{.ttft_base = kMs, .prefill_per_token = 0, .itl = kMs,
                                           .max_model_len = int64_t{1} << 40});
    ProbeResult r = RunOne(Suite(e.url, {"limits"}));
    EXPECT_EQ(r.verdict, Verdict::kFail) << Describe(r);
    EXPECT_EQ(r.Get("over_context_status"), 200);
    EXPECT_NE(r.finding.find("over_context"), std::string::npos) << r.finding;
  }
}

uint16_t FreePort() {
  boost::asio::io_context io;
  boost::asio::ip::tcp::acceptor a(io, {boost::asio::ip::make_address("127.0.0.1"), 0});
  return a.local_endpoint().port();
}

TEST(ProbeColdStart, HonestHealthPassesLyingHealthFails) {
  for (bool lies : {false, true}) {
    const uint16_t port = FreePort();
    std::unique_ptr<serve::Server> server;
    ProbeSuiteOptions o = Suite("http://127.0.0.1:" + std::to_string(port), {"cold-start", "health"});
    o.start = [&] {
      serve::ServerOptions so{.port = port, .ready_lies = lies};
      so.faults.cold_start = 400 * kMs;
      server = std::make_unique<serve::Server>(so, std::make_unique<serve::PacedEngine>(kFourSlots));
      return server->Start().status();
    };
    auto out = RunProbeSuite(o);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    ASSERT_EQ(out->results.size(), 2u);
    const ProbeResult& cold = out->results[0];
    const ProbeResult& health = out->results[1];
    EXPECT_EQ(cold.verdict, lies ? Verdict::kFail : Verdict::kPass) << Describe(cold);
    EXPECT_EQ(health.verdict, lies ? Verdict::kFail : Verdict::kPass) << Describe(health);
    EXPECT_GE(cold.Get("time_to_first_token_ms"), 400) << Describe(cold);
    if (lies) {
      EXPECT_LT(cold.Get("time_to_healthy_ms"), 400) << Describe(cold);
      EXPECT_GT(cold.Get("requests_failed_after_healthy"), 0);
    } else {
      EXPECT_GE(cold.Get("time_to_healthy_ms"), 400) << Describe(cold);
      EXPECT_EQ(cold.Get("requests_failed_after_healthy"), 0);
    }
  }
}

TEST(ProbeCacheIsolation, SharedCacheLeaksSaltedCacheDoesNot) {
  constexpr serve::PacedEngineOptions kEng{.ttft_base = 2 * kMs, .prefill_per_token = 50 * kNanosPerMicro, .itl = kMs};
  for (auto iso : {serve::CacheIsolation::kShared, serve::CacheIsolation::kPerTenant}) {
    for (TenantBy by : {TenantBy::kApiKey, TenantBy::kCacheSalt}) {
      Engine e(serve::ServerOptions{.cache_isolation = iso}, kEng);
      ProbeSuiteOptions o = Suite(e.url, {"cache-isolation"});
      o.settings.cache_trials = 12;
      o.settings.alpha = 0.001;  // one run per case here: keep the false-positive chance tiny
      o.settings.tenant_by = by;
      ProbeResult r = RunOne(o);
      const bool shared = iso == serve::CacheIsolation::kShared;
      EXPECT_EQ(r.verdict, shared ? Verdict::kFail : Verdict::kPass) << Describe(r);
      EXPECT_EQ(r.Get("trials"), 12);
      EXPECT_EQ(r.requests, 36);
      if (shared) {
        EXPECT_GT(r.Get("superiority"), 0.9) << Describe(r);
      } else {
        // The test's power at this sample size (n = 12 a side, alpha 0.001) is reported, not high.
        EXPECT_GT(r.Get("power_at_superiority_0.75"), 0.05);
        EXPECT_LT(r.Get("power_at_superiority_0.75"), 1);
        EXPECT_NE(r.finding.find("no detectable leak"), std::string::npos);
      }
    }
  }
}

TEST(ProbeSuite, BudgetsAreNeverExceeded) {
  Engine e(serve::ServerOptions{.max_waiting = 0}, kFourSlots);
  ProbeSuiteOptions o = Suite(e.url, {"overload", "cancellation", "cache-isolation"});
  o.settings.budget_scale = 0.05;
  const Nanos t0 = ProbeClient::SteadyNowNs();
  auto out = RunProbeSuite(o);
  ASSERT_TRUE(out.ok());
  ASSERT_EQ(out->results.size(), 3u);
  for (const ProbeResult& r : out->results) {
    for (const ProbeSpec& p : ProbeTable()) {
      if (p.name != r.name) continue;
      const auto max_requests = std::max<int64_t>(1, static_cast<int64_t>(static_cast<double>(p.budget.max_requests) * 0.05));
      EXPECT_LE(r.requests, max_requests) << r.name;
      EXPECT_LE(r.elapsed, static_cast<Nanos>(static_cast<double>(p.budget.max_time) * 0.05) + 500 * kMs) << r.name;
    }
  }
  EXPECT_LT(ProbeClient::SteadyNowNs() - t0, 15 * kNanosPerSecond);
}

TEST(ProbeClientBudget, ChargeRefusesPastTheBudget) {
  client::ClientOptions copt;
  copt.base_url = "http://127.0.0.1:9";
  ProbeClient c(copt, ProbeBudget{.max_requests = 3, .max_time = kNanosPerSecond});
  EXPECT_TRUE(c.Charge(2).ok());
  EXPECT_EQ(c.Charge(2).code(), Status::Code::kResourceExhausted);
  EXPECT_TRUE(c.Charge(1).ok());
  EXPECT_EQ(c.used(), 3);
  auto r = c.Call(CallSpec{.body = "{}"});
  EXPECT_FALSE(r.ok()) << "no request beyond the budget";
}

std::string ReadFile(const std::string& path) {
  std::ifstream f(path);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

TEST(ProbeSuite, UnreachableTargetStopsWithResultsSoFarWritten) {
  const std::string dir = infereng::testing::ScratchPath("out");
  std::filesystem::remove_all(dir);
  ProbeSuiteOptions o = Suite("http://127.0.0.1:" + std::to_string(FreePort()), {"limits", "streaming"});
  o.out_dir = dir;
  auto out = RunProbeSuite(o);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->error.code(), Status::Code::kUnavailable);
  EXPECT_NE(out->error.message().find("unreachable"), std::string::npos) << out->error.message();
  EXPECT_TRUE(out->results.empty());
  auto j = nlohmann::json::parse(ReadFile(dir + "/probe.json"));
  EXPECT_EQ(j["complete"], false);
  EXPECT_NE(j["error"].get<std::string>().find("unreachable"), std::string::npos);
}

TEST(ProbeSuite, DyingTargetKeepsTheFinishedProbes) {
  const std::string dir = infereng::testing::ScratchPath("out");
  std::filesystem::remove_all(dir);
  auto e = std::make_unique<Engine>(serve::ServerOptions{}, kFourSlots);
  ProbeSuiteOptions o = Suite(e->url, {"limits", "streaming", "health"});
  o.out_dir = dir;
  // The limits probe is first; the target goes away while it runs.
  std::thread killer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    e->server->Stop();
  });
  auto out = RunProbeSuite(o);
  killer.join();
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->error.code(), Status::Code::kUnavailable) << out->error.ToString();
  ASSERT_GE(out->results.size(), 1u);
  EXPECT_LT(out->results.size(), 3u);
  auto j = nlohmann::json::parse(ReadFile(dir + "/probe.json"));
  EXPECT_EQ(j["probes"].size(), out->results.size());
  EXPECT_FALSE(j["error"].is_null());
}

// A long prefill (6000 prompt words at 100 us each) with a 250 ms silence threshold: silent
// until the first token warns; a prefill shorter than the threshold with nothing before the
// token cannot tell (n/a); the same long prefill from a server sending an SSE comment every
// 50 ms (serve --sse-heartbeat) passes, its longest silence about one heartbeat.
TEST(ProbeHeartbeat, SilentLongPrefillWarnsShortPrefillIsNaHeartbeatsPass) {
  constexpr serve::PacedEngineOptions kSlowPrefill{.ttft_base = 5 * kMs, .prefill_per_token = 100 * kNanosPerMicro,
                                                   .itl = 5 * kMs};
  auto run = [](serve::ServerOptions so, serve::PacedEngineOptions eo) {
    Engine e(so, eo);
    ProbeSuiteOptions o = Suite(e.url, {"heartbeat"});
    o.settings.heartbeat_silence = 250 * kMs;
    o.settings.heartbeat_prompt_tokens = 6000;
    return RunOne(o);
  };
  {
    ProbeResult r = run(serve::ServerOptions{}, kSlowPrefill);
    EXPECT_EQ(r.verdict, Verdict::kWarn) << Describe(r);
    EXPECT_EQ(r.Get("comments_before_first_token"), 0);
    EXPECT_GE(r.Get("longest_silence_ms"), 250) << Describe(r);
    EXPECT_GE(r.Get("first_token_ms"), 500) << "the prefill of 6000 words at 100 us: " << Describe(r);
    EXPECT_EQ(r.Get("silence_threshold_ms"), 250);
    EXPECT_NE(r.finding.find("250 ms"), std::string::npos) << "states the threshold: " << r.finding;
  }
  {
    ProbeResult r = run(serve::ServerOptions{}, kFourSlots);  // no per-token prefill: first token in ~5 ms
    EXPECT_EQ(r.verdict, Verdict::kNotApplicable) << Describe(r);
    EXPECT_LT(r.Get("first_token_ms"), 250) << Describe(r);
  }
  {
    ProbeResult r = run(serve::ServerOptions{.sse_heartbeat = 50 * kMs}, kSlowPrefill);
    EXPECT_EQ(r.verdict, Verdict::kPass) << Describe(r);
    EXPECT_GE(r.Get("first_token_ms"), 500) << Describe(r);
    // One comment per 50 ms of a >= 500 ms wait (timer slack on a loaded machine: at least 4).
    EXPECT_GE(r.Get("comments_before_first_token"), 4) << Describe(r);
    EXPECT_LT(r.Get("longest_silence_ms"), 250) << Describe(r);
  }
}

TEST(ProbeSuite, UnknownProbeNameIsRefusedBeforeAnythingIsSent) {
  auto out = RunProbeSuite(Suite("http://127.0.0.1:9", {"overlaod"}));
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("overlaod"), std::string::npos);
  EXPECT_NE(out.status().message().find("overload"), std::string::npos);
}

}  // namespace
}  // namespace infereng::job
