// A trace's sessions replayed as agent tasks against the embedded server on 127.0.0.1
// (traffic.arrival.sessions, workload/sessions.h "Trace sessions"): every later step goes
// when the step before it has ended and not before its trace time, parallel calls (equal
// trace times) go together, a later call re-sends the conversation (the server's prefix
// cache sees it), and the twin releases the same steps by the same rule in virtual time.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

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

// Session s1: 0 ms, two parallel calls at 1 ms, 2 ms: the replay is slower than that, so
// each step waits for the one before. Session s2: 50 ms, then 600 ms: its calls keep their
// trace times. A call without a session id: a task of one call.
constexpr const char* kTrace =
    "{\"timestamp\": 0.000, \"input_tokens\": 96, \"output_tokens\": 8, \"session_id\": \"s1\"}\n"
    "{\"timestamp\": 0.001, \"input_tokens\": 160, \"output_tokens\": 8, \"session_id\": \"s1\"}\n"
    "{\"timestamp\": 0.001, \"input_tokens\": 150, \"output_tokens\": 8, \"session_id\": \"s1\"}\n"
    "{\"timestamp\": 0.002, \"input_tokens\": 240, \"output_tokens\": 8, \"session_id\": \"s1\"}\n"
    "{\"timestamp\": 0.050, \"input_tokens\": 64, \"output_tokens\": 8, \"session_id\": \"s2\"}\n"
    "{\"timestamp\": 0.600, \"input_tokens\": 128, \"output_tokens\": 8, \"session_id\": \"s2\"}\n"
    "{\"timestamp\": 0.650, \"input_tokens\": 50, \"output_tokens\": 8}\n";

// The trace time of each call, by (prompt tokens): the lengths above are distinct.
const std::map<int64_t, Nanos> kTraceTime = {
    {96, 0}, {160, 1 * kNanosPerMilli}, {150, 1 * kNanosPerMilli}, {240, 2 * kNanosPerMilli},
    {64, 50 * kNanosPerMilli}, {128, 600 * kNanosPerMilli}, {50, 650 * kNanosPerMilli}};

// Runs bench with `card` against an embedded server (tiny-model, 20x speed-up) on 127.0.0.1,
// its files in `out_dir`.
Result<bench::BenchResult> BenchOnEmbeddedServer(const card::WorkloadCard& card, const std::string& out_dir) {
  serve::ServerOptions so;
  so.port = 0;
  so.speedup = 20;
  so.model_name = "tiny-model";
  serve::Server server(so, std::make_unique<serve::PacedEngine>(serve::PacedEngineOptions{}));
  INFERENG_ASSIGN_OR_RETURN(const int port, server.Start());
  bench::BenchOptions o;
  o.target = "http://127.0.0.1:" + std::to_string(port);
  o.card = card;
  o.out_dir = out_dir;
  return RunBench(o);
}

class BenchTraceSessionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("infereng_trace_sessions_bench_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    std::ofstream(dir_ / "t.jsonl") << kTrace;
    auto c = card::ParseCard(
        "name: ts\ntraffic:\n  arrival: {process: trace, file: t.jsonl, sessions: tasks}\n"
        "model:\n  id: tiny-model\nbench:\n  duration: 5s\n  warmup: 0s\n  seed: 3\n",
        (dir_ / "c.yaml").string());
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    card_ = *c;
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Checks the release rule on one run's records (measured or simulated); returns how many
  // later calls waited for their step before (the end binds) and how many kept their
  // trace time (the trace binds).
  void CheckReleases(const std::vector<metrics::RequestRecord>& records, int* waited, int* on_time) {
    std::map<int64_t, std::map<int32_t, std::vector<metrics::RequestRecord>>> sessions;
    for (const metrics::RequestRecord& r : records) sessions[r.session][r.turn].push_back(r);
    ASSERT_EQ(sessions.size(), 3u);
    for (const auto& [id, steps] : sessions) {
      Nanos prev_end = -1;
      for (const auto& [turn, calls] : steps) {
        Nanos end = 0;
        for (const metrics::RequestRecord& c : calls) {
          ASSERT_TRUE(c.ok()) << c.error_message;
          ASSERT_TRUE(kTraceTime.count(c.input_tokens_target)) << c.input_tokens_target;
          const Nanos trace_t = kTraceTime.at(c.input_tokens_target);
          if (turn == 0) {
            EXPECT_EQ(c.t_sched, trace_t);
          } else {
            EXPECT_EQ(c.t_sched, std::max(prev_end, trace_t)) << "session " << id << " step " << turn;
            ++(prev_end > trace_t ? *waited : *on_time);
          }
          EXPECT_EQ(c.branches, turn == 1 && c.calls == 4 ? 2 : 1);
          end = std::max(end, c.t_end);
        }
        prev_end = end;
      }
    }
  }

  fs::path dir_;
  card::WorkloadCard card_;
};

TEST_F(BenchTraceSessionsTest, LaterStepsWaitForTheStepBeforeAndForTheirTraceTime) {
  bench::BenchOptions o;
  o.out_dir = (dir_ / "run").string();
  Result<bench::BenchResult> r = BenchOnEmbeddedServer(card_, o.out_dir);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(r->summary.sessions.has_value());
  const metrics::SessionSummary& s = *r->summary.sessions;
  EXPECT_TRUE(s.tasks);
  EXPECT_EQ(s.started, 3);
  EXPECT_EQ(s.succeeded, 3);
  EXPECT_EQ(s.failed, 0);

  // The manifest says how the trace was replayed.
  std::ifstream mf(o.out_dir + "/manifest.json");
  const nlohmann::json manifest = nlohmann::json::parse(mf, nullptr, false);
  ASSERT_FALSE(manifest.is_discarded());
  EXPECT_EQ(manifest["load"].value("trace_sessions", ""), "tasks");
  EXPECT_EQ(manifest["load"].value("trace_parallel_window_s", -1.0), 0.0);

  auto records = metrics::ReadRecordsFile(o.out_dir + "/requests.jsonl");
  ASSERT_TRUE(records.ok()) << records.status().ToString();
  ASSERT_EQ(records->size(), 7u);
  int waited = 0, on_time = 0;
  CheckReleases(*records, &waited, &on_time);
  EXPECT_EQ(waited, 3);   // s1's two parallel calls and its last call
  EXPECT_EQ(on_time, 1);  // s2's second call, 550 ms after its first
  // s1's last call re-sent the conversation: the server had its earlier prompt cached.
  for (const metrics::RequestRecord& c : *records) {
    if (c.input_tokens_target == 240) {
      EXPECT_GE(c.cached_tokens, 160 - 32);
    }
  }

  // The twin on the same card releases by the same rule.
  twin::TwinSettings ts;
  ts.engine.kv_cache_tokens = 1 << 20;
  const twin::TwinSetup setup = twin::ManualTwin(
      ts, std::make_shared<twin::LinearCostModel>(twin::LinearCostOptions{.fixed_s = 0.005, .per_prefill_token_s = 1e-6}), 1.0);
  twin::SimulationOptions sim_o;
  sim_o.keep_records = true;
  auto sim = twin::RunSimulation(card_, setup, sim_o);
  ASSERT_TRUE(sim.ok()) << sim.status().ToString();
  ASSERT_EQ(sim->records.size(), 7u);
  int sim_waited = 0, sim_on_time = 0;
  CheckReleases(sim->records, &sim_waited, &sim_on_time);
  EXPECT_EQ(sim_waited, 3);
  EXPECT_EQ(sim_on_time, 1);
  ASSERT_TRUE(sim->summary.sessions.has_value());
  EXPECT_EQ(sim->summary.sessions->succeeded, 3);
}

// A Mooncake-format trace without session ids (16-token blocks): the conversations its
// hash_ids imply (trace/conversation_linker.h) are replayed as sessions. A: 0, 20 and 30 ms,
// each turn re-sending the one before (A2 carries A1's whole blocks 0 and 1, A3 A2's 0-5);
// B at 10 ms shares only the first block with A; C at 600 ms one whole block.
TEST(BenchInferredSessions, ConversationsFromHashIdsAreReplayedAsSessions) {
  const fs::path dir = fs::temp_directory_path() / ("infereng_inferred_sessions_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "h.jsonl")
      << "{\"timestamp\": 0, \"input_length\": 40, \"output_length\": 8, \"hash_ids\": [0, 1, 2]}\n"
         "{\"timestamp\": 10, \"input_length\": 40, \"output_length\": 8, \"hash_ids\": [0, 3, 4]}\n"
         "{\"timestamp\": 20, \"input_length\": 72, \"output_length\": 8, \"hash_ids\": [0, 1, 2, 5, 6]}\n"
         "{\"timestamp\": 30, \"input_length\": 90, \"output_length\": 8, \"hash_ids\": [0, 1, 2, 5, 6, 7]}\n"
         "{\"timestamp\": 600, \"input_length\": 20, \"output_length\": 8, \"hash_ids\": [0, 8]}\n";
  auto c = card::ParseCard(
      "name: inferred\ntraffic:\n  arrival: {process: trace, file: h.jsonl, sessions: sessions}\n"
      "model:\n  id: tiny-model\nbench:\n  duration: 5s\n  warmup: 0s\n  seed: 3\n",
      (dir / "c.yaml").string());
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  c->traffic.arrival.trace_block_tokens = 16;

  bench::BenchOptions o;
  o.out_dir = (dir / "run").string();
  Result<bench::BenchResult> r = BenchOnEmbeddedServer(*c, o.out_dir);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(r->summary.sessions.has_value());
  EXPECT_FALSE(r->summary.sessions->tasks);
  EXPECT_EQ(r->summary.sessions->started, 3);
  EXPECT_EQ(r->summary.sessions->succeeded, 3);
  bool noted = false;
  for (const std::string& n : r->notes) noted |= n.find("imply 3 conversations (2 of 5 requests") != std::string::npos;
  EXPECT_TRUE(noted);

  auto records = metrics::ReadRecordsFile(o.out_dir + "/requests.jsonl");
  ASSERT_TRUE(records.ok()) << records.status().ToString();
  ASSERT_EQ(records->size(), 5u);
  std::map<int64_t, const metrics::RequestRecord*> by_input;  // distinct prompt lengths, but A1's and B's
  for (const metrics::RequestRecord& x : *records) {
    ASSERT_TRUE(x.ok()) << x.error_message;
    if (x.input_tokens_target != 40 || x.t_sched == 0) by_input[x.input_tokens_target] = &x;  // A1 went at 0
  }
  const metrics::RequestRecord &a1 = *by_input.at(40), &a2 = *by_input.at(72), &a3 = *by_input.at(90);
  EXPECT_EQ(a2.session, a1.session);
  EXPECT_EQ(a3.session, a1.session);
  EXPECT_EQ(a2.turn, 1);
  EXPECT_EQ(a3.turn, 2);
  EXPECT_NE(by_input.at(20)->session, a1.session);
  // Each turn went after the one before ended and not before its trace time.
  EXPECT_EQ(a2.t_sched, std::max(a1.t_end, 20 * kNanosPerMilli));
  EXPECT_EQ(a3.t_sched, std::max(a2.t_end, 30 * kNanosPerMilli));
  // A3 re-sent A2's prompt: the server had its whole 16-token blocks cached.
  EXPECT_GE(a3.cached_tokens, 64);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace infereng::job
