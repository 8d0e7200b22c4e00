// Sessions and agent tasks measured end to end against the embedded server on 127.0.0.1:
// turns re-send the conversation (the server's prefix cache sees it, as the twin predicts),
// task latency is its steps plus tool time, and Ctrl-C keeps finished tasks.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "card/card_parser.h"
#include "job/bench_job.h"
#include "metrics/records_io.h"
#include "serve/paced_engine.h"
#include "serve/server.h"
#include "twin/cost_model.h"
#include "twin/simulation.h"

namespace infereng::job {
namespace {

namespace fs = std::filesystem;

std::string TempDir(const std::string& name) {
  fs::path p = fs::temp_directory_path() / ("infereng_sessions_test_" + std::to_string(getpid()) + "_" + name);
  fs::remove_all(p);
  fs::create_directories(p);
  return p.string();
}

card::WorkloadCard Card(const std::string& traffic) {
  auto c = card::ParseCard("name: sessions\ntraffic:\n" + traffic +
                               "model:\n  id: tiny-model\nbench:\n  duration: 2s\n  warmup: 0s\n  seed: 3\n",
                           "sessions.yaml");
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? *c : card::WorkloadCard{};
}

struct Server {
  Server() {
    serve::ServerOptions so;
    so.port = 0;
    so.speedup = 20;
    so.model_name = "tiny-model";
    server = std::make_unique<serve::Server>(so, std::make_unique<serve::PacedEngine>(serve::PacedEngineOptions{}));
    auto port = server->Start();
    EXPECT_TRUE(port.ok()) << port.status().ToString();
    url = "http://127.0.0.1:" + std::to_string(port.ok() ? *port : 1);
  }
  std::unique_ptr<serve::Server> server;
  std::string url;
};

std::map<int64_t, std::vector<metrics::RequestRecord>> BySession(const std::string& path) {
  auto records = metrics::ReadRecordsFile(path);
  EXPECT_TRUE(records.ok()) << records.status().ToString();
  std::map<int64_t, std::vector<metrics::RequestRecord>> out;
  if (!records.ok()) return out;
  for (const metrics::RequestRecord& r : *records) out[r.session].push_back(r);
  for (auto& [id, calls] : out) {
    std::sort(calls.begin(), calls.end(), [](const auto& a, const auto& b) { return a.turn < b.turn; });
  }
  return out;
}

constexpr const char* kChat =
    "  arrival: 8rps\n  input_tokens: 96\n  output_tokens: 8\n"
    "  sessions: {turns: 4, think_time: 30ms, new_message_tokens: 24}\n";

TEST(BenchSessionsTest, TurnsResendTheConversationAndTheHitRateRisesAsTheTwinPredicts) {
  Server srv;
  bench::BenchOptions o;
  o.target = srv.url;
  o.card = Card(kChat);
  o.out_dir = TempDir("chat");
  Result<bench::BenchResult> r = RunBench(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(r->summary.sessions.has_value());
  const metrics::SessionSummary& s = *r->summary.sessions;
  EXPECT_GT(s.succeeded, 5);
  EXPECT_EQ(s.failed, 0);
  // The server saw each turn's prompt start with the previous prompt and answer.
  int full = 0;
  for (const auto& [id, calls] : BySession(o.out_dir + "/requests.jsonl")) {
    ASSERT_GE(id, 0);
    for (size_t k = 1; k < calls.size(); ++k) {
      ASSERT_EQ(calls[k].turn, static_cast<int32_t>(k));
      EXPECT_GE(calls[k].prompt_tokens, calls[k - 1].prompt_tokens + calls[k - 1].completion_tokens + 20);
      EXPECT_GE(calls[k].cached_tokens, calls[k - 1].prompt_tokens - 32) << "session " << id << " turn " << k;
    }
    full += calls.size() == 4;
  }
  EXPECT_GT(full, 5);
  ASSERT_EQ(s.by_turn.size(), 4u);
  for (size_t k = 1; k < 4; ++k) EXPECT_GT(s.by_turn[k].prefix_hit_rate, s.by_turn[k - 1].prefix_hit_rate);

  // The twin, on the same card and seed, predicts the same reuse.
  twin::TwinSettings ts;
  ts.engine.kv_cache_tokens = 1 << 20;
  const twin::TwinSetup setup = twin::ManualTwin(
      ts, std::make_shared<twin::LinearCostModel>(twin::LinearCostOptions{.fixed_s = 0.005, .per_prefill_token_s = 1e-6}), 1.0);
  twin::SimulationOptions so;
  auto sim = twin::RunSimulation(o.card, setup, so);
  ASSERT_TRUE(sim.ok()) << sim.status().ToString();
  ASSERT_TRUE(sim->summary.sessions.has_value());
  EXPECT_NEAR(sim->summary.sessions->prefix_hit_rate, s.prefix_hit_rate, 0.05)
      << "measured " << s.prefix_hit_rate << " predicted " << sim->summary.sessions->prefix_hit_rate;
}

// Parallel calls measured: each later step's 3 calls are sent together the tool time after
// the previous step's last call ended, each re-sending the conversation so far (the server
// caches it for all three), and the task succeeds with all 7 calls in; the twin predicts
// the same reuse.
TEST(BenchSessionsTest, ParallelStepsAreSentTogetherAfterThePreviousStepsLastCall) {
  Server srv;
  bench::BenchOptions o;
  o.target = srv.url;
  o.card = Card("  arrival: 4rps\n  input_tokens: 96\n  output_tokens: 8\n  agent_steps: 3\n"
                "  agent_tool_time: 40ms\n  agent_parallel: 3\n  sessions: {new_message_tokens: 24}\n");
  o.out_dir = TempDir("parallel");
  Result<bench::BenchResult> r = RunBench(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(r->summary.sessions.has_value());
  const metrics::SessionSummary& s = *r->summary.sessions;
  EXPECT_EQ(s.failed, 0);
  int full = 0;
  for (const auto& [id, calls] : BySession(o.out_dir + "/requests.jsonl")) {
    std::map<int32_t, std::vector<metrics::RequestRecord>> steps;
    for (const metrics::RequestRecord& c : calls) {
      EXPECT_EQ(c.calls, 7);
      EXPECT_EQ(c.branches, c.turn == 0 ? 1 : 3);
      steps[c.turn].push_back(c);
    }
    if (calls.size() != 7) continue;  // cut by the window
    Nanos prev_end = 0;
    int64_t first_prompt = 0;
    for (const auto& [turn, c] : steps) {
      Nanos end = 0;
      for (const metrics::RequestRecord& rec : c) {
        ASSERT_TRUE(rec.ok()) << rec.error_message;
        EXPECT_EQ(rec.t_sched, c.front().t_sched) << "released together";
        if (turn == 0) first_prompt = rec.prompt_tokens;
        if (turn > 0) {
          EXPECT_EQ(rec.t_sched, prev_end + 40 * kNanosPerMilli) << "the tool time after the step's last call";
          EXPECT_GE(rec.cached_tokens, first_prompt - 32) << "session " << id << " step " << turn;
        }
        end = std::max(end, rec.t_end);
      }
      prev_end = end;
    }
    ++full;
  }
  EXPECT_GT(full, 2);
  EXPECT_EQ(s.succeeded, full);
  EXPECT_EQ(s.calls.p50, 7);

  twin::TwinSettings ts;
  ts.engine.kv_cache_tokens = 1 << 20;
  const twin::TwinSetup setup = twin::ManualTwin(
      ts, std::make_shared<twin::LinearCostModel>(twin::LinearCostOptions{.fixed_s = 0.005, .per_prefill_token_s = 1e-6}), 1.0);
  auto sim = twin::RunSimulation(o.card, setup, twin::SimulationOptions{});
  ASSERT_TRUE(sim.ok()) << sim.status().ToString();
  ASSERT_TRUE(sim->summary.sessions.has_value());
  EXPECT_NEAR(sim->summary.sessions->prefix_hit_rate, s.prefix_hit_rate, 0.05)
      << "measured " << s.prefix_hit_rate << " predicted " << sim->summary.sessions->prefix_hit_rate;
}

constexpr const char* kAgent =
    "  arrival: 10rps\n  input_tokens: 64\n  output_tokens: 8\n  agent_steps: 5\n  agent_tool_time: 60ms\n";

TEST(BenchSessionsTest, CtrlCMidTaskKeepsFinishedTasksAndMarksTheRestIncomplete) {
  Server srv;
  bench::BenchOptions o;
  o.target = srv.url;
  o.card = Card(kAgent);
  o.out_dir = TempDir("agent");
  o.duration = 20 * kNanosPerSecond;
  std::atomic<bool> stop{false};
  o.interrupt = &stop;
  std::thread t([&] {
    // Stop once a few tasks have finished all their steps (step 4 is the last).
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < deadline) {
      std::ifstream f(o.out_dir + "/requests.jsonl");
      int last_steps = 0;
      for (std::string line; std::getline(f, line);) last_steps += line.find("\"turn\":4") != std::string::npos;
      if (last_steps >= 4) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    stop.store(true);
  });
  Result<bench::BenchResult> r = RunBench(o);
  t.join();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->interrupted);
  ASSERT_TRUE(r->summary.sessions.has_value());
  const metrics::SessionSummary& s = *r->summary.sessions;
  EXPECT_TRUE(s.tasks);
  EXPECT_GE(s.succeeded, 4);
  EXPECT_GT(s.incomplete, 0) << "10 tasks/s of ~5 steps: some were mid-task at the interrupt";
  EXPECT_EQ(s.failed, 0);
  EXPECT_EQ(s.started, s.succeeded + s.incomplete);
  // A finished task's latency is its steps (from t_sched) plus the tool time between them.
  int checked = 0;
  for (const auto& [id, steps] : BySession(o.out_dir + "/requests.jsonl")) {
    if (steps.size() != 5 || !std::all_of(steps.begin(), steps.end(), [](const auto& c) { return c.ok(); })) continue;
    Nanos sum = 0;
    for (size_t k = 0; k < steps.size(); ++k) {
      sum += steps[k].t_end - steps[k].t_sched;
      if (k > 0) {
        EXPECT_EQ(steps[k].t_sched, steps[k - 1].t_end + 60 * kNanosPerMilli);
      }
    }
    EXPECT_EQ(steps.back().t_end - steps.front().t_sched, sum + 4 * 60 * kNanosPerMilli);
    ++checked;
  }
  EXPECT_EQ(checked, s.succeeded);
}

}  // namespace
}  // namespace infereng::job
