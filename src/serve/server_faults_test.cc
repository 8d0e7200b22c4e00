// serve::Server: fault injection, cold start, the emission schedule and the emission trace.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "serve/http_test_client.h"
#include "serve/paced_engine.h"
#include "serve/server.h"
#include "testing/paths.h"

namespace infereng::serve {
namespace {

using nlohmann::json;
using testing::TestClient;
using testing::TestResponse;

struct Started {
  Started(ServerOptions opt, PacedEngineOptions eng) {
    opt.port = 0;
    opt.merge_late_tokens = false;  // tests count chunks, whatever the machine's load
    server = std::make_unique<Server>(opt, std::make_unique<PacedEngine>(eng));
    auto p = server->Start();
    EXPECT_TRUE(p.ok());
    port = p.ok() ? *p : 0;
  }
  TestResponse Chat(int max_tokens, bool stream, bool continuous = false) {
    json body = {{"messages", {{{"role", "user"}, {"content", "hello there"}}}}, {"max_tokens", max_tokens},
                 {"stream", stream}};
    if (continuous) body["stream_options"] = {{"continuous_usage_stats", true}};
    TestClient c(port);
    return c.Call("POST", "/v1/chat/completions", body.dump());
  }
  std::unique_ptr<Server> server;
  uint16_t port = 0;
};

constexpr PacedEngineOptions kFast{.ttft_base = 2 * kNanosPerMilli, .prefill_per_token = 0, .itl = 2 * kNanosPerMilli};

ServerOptions WithFaults(const std::string& spec) {
  ServerOptions o;
  auto f = ParseFaultSpec(spec);
  EXPECT_TRUE(f.ok()) << f.status().ToString();
  if (f.ok()) o.faults = *f;
  return o;
}

TEST(ServeFaults, Error5xxBeforeTheStream) {
  Started s(WithFaults("error5xx=1"), kFast);
  TestResponse r = s.Chat(5, true);
  EXPECT_EQ(r.status, 500);
  EXPECT_EQ(json::parse(r.body)["error"]["code"], 500);
}

TEST(ServeFaults, StreamErrorInsideA200Stream) {
  Started s(WithFaults("stream_error=1"), kFast);
  TestResponse r = s.Chat(9, true);
  ASSERT_EQ(r.status, 200);
  auto ev = r.Events();
  ASSERT_GE(ev.size(), 3u);
  json err = json::parse(ev[ev.size() - 2]);
  EXPECT_TRUE(err.contains("error"));
  EXPECT_EQ(ev.back(), "[DONE]");
  EXPECT_LT(ev.size(), 1u + 9u + 1u);  // it stopped early
}

TEST(ServeFaults, DropClosesMidStreamWithoutDone) {
  Started s(WithFaults("drop=1"), kFast);
  TestResponse r = s.Chat(9, true);
  EXPECT_EQ(r.status, 200);
  EXPECT_FALSE(r.complete);
  EXPECT_EQ(r.body.find("[DONE]"), std::string::npos);
}

TEST(ServeFaults, StallHoldsTheStream) {
  Started s(WithFaults("stall=1:300ms"), kFast);
  TestResponse r = s.Chat(9, true);
  ASSERT_EQ(r.status, 200);
  ASSERT_TRUE(r.complete);
  int64_t max_gap = 0;
  for (std::size_t i = 1; i < r.chunks.size(); ++i) max_gap = std::max(max_gap, r.chunks[i].first - r.chunks[i - 1].first);
  EXPECT_GE(max_gap, 280 * kNanosPerMilli);
  EXPECT_LT(max_gap, 2000 * kNanosPerMilli);
}

TEST(ServeFaults, StreamIntervalPutsSeveralTokensInAChunk) {
  Started s(WithFaults("interval=4"), kFast);
  TestResponse r = s.Chat(10, true, /*continuous=*/true);
  ASSERT_EQ(r.status, 200);
  std::vector<int> usage;
  for (const auto& ev : r.Events()) {
    if (ev == "[DONE]") continue;
    usage.push_back(json::parse(ev)["usage"]["completion_tokens"]);
  }
  EXPECT_EQ(usage, (std::vector<int>{0, 4, 8, 10}));  // role chunk, then 4 + 4 + 2
}

TEST(ServeFaults, ColdStartAnswers503ThenHealthy) {
  Started s(WithFaults("cold_start=300ms"), kFast);
  {
    TestClient c(s.port);
    TestResponse h = c.Call("GET", "/health");
    EXPECT_EQ(h.status, 503);
    EXPECT_EQ(json::parse(h.body)["error"]["message"], "Loading model");
  }
  EXPECT_EQ(s.Chat(2, false).status, 503);
  std::this_thread::sleep_for(std::chrono::milliseconds(350));
  TestClient c(s.port);
  EXPECT_EQ(c.Call("GET", "/health").status, 200);
  EXPECT_EQ(s.Chat(2, false).status, 200);
}

TEST(ServeFaults, DrawsAreSeededAndProportional) {
  auto spec = ParseFaultSpec("error5xx=0.25");
  ASSERT_TRUE(spec.ok());
  int hits = 0;
  for (uint64_t i = 0; i < 4000; ++i) hits += DrawFaults(*spec, 7, i, 10).error5xx ? 1 : 0;
  EXPECT_NEAR(hits, 1000, 120);
  EXPECT_EQ(DrawFaults(*spec, 7, 3, 10).error5xx, DrawFaults(*spec, 7, 3, 10).error5xx);
}

// With a fixed cost model the engine schedules the first token ttft_base after the
// request arrives, then one every itl; the server writes each token at or after its
// scheduled time and records how late. The assertions are on that schedule (exact) and
// on the recorded facts agreeing with each other, never on how fast a busy machine
// delivers the bytes (the wall-clock gaps a client sees are the schedule plus lateness
// plus delivery, and only the first two are the server's).
TEST(ServeTiming, TokenGapsMatchTheEngineSchedule) {
  constexpr Nanos kTtft = 60 * kNanosPerMilli, kItl = 25 * kNanosPerMilli;
  const std::string path = infereng::testing::ScratchPath("trace.csv");
  ServerOptions opt;
  opt.trace_emissions_path = path;
  TestResponse r;
  int64_t t_send = 0;
  ServerSnapshot snap;
  {
    Started s(opt, {.ttft_base = kTtft, .prefill_per_token = 0, .itl = kItl});
    TestClient c(s.port);
    t_send = testing::SteadyNs();
    c.SendRequest("POST", "/v1/completions", json({{"prompt", "p q r"}, {"max_tokens", 12}, {"stream", true}}).dump());
    r = c.Read();
    snap = s.server->Snapshot();
    s.server->Stop();
  }
  ASSERT_EQ(r.status, 200);
  ASSERT_EQ(r.chunks.size(), 13u);  // 12 tokens (one chunk each: merging is off) + [DONE]

  struct Row {
    int64_t write, sched;
  };
  std::vector<Row> rows;
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    const std::size_t comma = line.find(',');
    rows.push_back({std::stoll(line.substr(0, comma)), std::stoll(line.substr(comma + 1))});
  }
  ASSERT_EQ(rows.size(), 12u);

  // The engine's schedule: first token ttft_base after arrival (the arrival is after the
  // client's send and before the client saw the first chunk), then exactly itl apart.
  EXPECT_GE(rows[0].sched - t_send, kTtft);
  EXPECT_LE(rows[0].sched, r.chunks[0].first);
  for (std::size_t i = 1; i < rows.size(); ++i) {
    EXPECT_NEAR(static_cast<double>(rows[i].sched - rows[i - 1].sched), static_cast<double>(kItl), 1e3) << "token " << i;
  }
  // The recorded facts: nothing written before its time, nothing seen before it was
  // scheduled, and the lateness statistics are those of the trace.
  Nanos max_late = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_GE(rows[i].write, rows[i].sched) << "token " << i;
    EXPECT_GE(r.chunks[i].first, rows[i].sched) << "token " << i;
    max_late = std::max(max_late, rows[i].write - rows[i].sched);
  }
  EXPECT_EQ(snap.lateness_samples, 12);
  EXPECT_EQ(snap.lateness_max, max_late);
}

TEST(ServeTiming, SpeedupCompressesTheSchedule) {
  ServerOptions opt;
  opt.speedup = 4;
  Started s(opt, {.ttft_base = 80 * kNanosPerMilli, .prefill_per_token = 0, .itl = 40 * kNanosPerMilli});
  TestClient c(s.port);
  c.SendRequest("POST", "/v1/completions", json({{"prompt", "p"}, {"max_tokens", 8}, {"stream", true}}).dump());
  TestResponse r = c.Read();
  ASSERT_EQ(r.chunks.size(), 9u);
  double total_ms = static_cast<double>(r.chunks[7].first - r.chunks[0].first) / 1e6;
  EXPECT_NEAR(total_ms, 7 * 10.0, 20);
}

TEST(ServeTrace, EveryWrittenChunkIsTracedWithTheClientsRequestId) {
  std::string path = infereng::testing::ScratchPath("trace.csv");
  {
    ServerOptions opt;
    opt.trace_emissions_path = path;
    opt.trace_capacity = 16;
    Started s(opt, kFast);
    for (int i = 0; i < 3; ++i) {
      TestClient c(s.port);
      json body = {{"prompt", "a b"}, {"max_tokens", 7}, {"stream", true}};
      ASSERT_EQ(c.Call("POST", "/v1/completions", body.dump(), "x-request-id: run-" + std::to_string(i) + "\r\n").status, 200);
    }
    ServerSnapshot snap = s.server->Snapshot();
    EXPECT_EQ(snap.tokens_emitted, 21);
    EXPECT_EQ(snap.lateness_samples, 21);
    s.server->Stop();
  }
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "t_write_ns,t_sched_ns,request_id,x_request_id,tokens");
  int lines = 0, run1 = 0;
  while (std::getline(in, line)) {
    ++lines;
    if (line.find(",run-1,") != std::string::npos) ++run1;
    long long t_write = std::stoll(line.substr(0, line.find(','))), t_sched = std::stoll(line.substr(line.find(',') + 1));
    EXPECT_GE(t_write, t_sched);
    EXPECT_NE(line.find(",cmpl-"), std::string::npos);
  }
  EXPECT_EQ(lines, 21);
  EXPECT_EQ(run1, 7);
}

}  // namespace
}  // namespace infereng::serve
