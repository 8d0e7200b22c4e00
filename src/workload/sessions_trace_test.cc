// Trace sessions (sessions.h, "Trace sessions"): a hand-made trace's session ids become
// steps with parallel calls, released after the step before ends and not before their trace
// time; a failed call ends its session; prompts re-send the session's stream.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "card/card_parser.h"
#include "workload/sessions.h"

namespace infereng::workload {
namespace {

using ::testing::HasSubstr;

// Session a: a call at 0 s, two parallel calls at 2.0 and 2.05 s, a last call at 4 s;
// session b: one call at 0.5 s; a call without a session at 5 s (a session of its own).
constexpr const char* kTrace =
    "{\"timestamp\": 10.0, \"input_tokens\": 100, \"output_tokens\": 10, \"session_id\": \"a\"}\n"
    "{\"timestamp\": 10.5, \"input_tokens\": 50, \"output_tokens\": 5, \"session_id\": \"b\"}\n"
    "{\"timestamp\": 12.0, \"input_tokens\": 200, \"output_tokens\": 11, \"session_id\": \"a\"}\n"
    "{\"timestamp\": 12.05, \"input_tokens\": 180, \"output_tokens\": 12, \"session_id\": \"a\"}\n"
    "{\"timestamp\": 14.0, \"input_tokens\": 400, \"output_tokens\": 13, \"session_id\": \"a\"}\n"
    "{\"timestamp\": 15.0, \"input_tokens\": 60, \"output_tokens\": 5}\n";

class TraceSessionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("infereng_trace_sessions_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    std::ofstream(dir_ / "t.jsonl") << kTrace;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  card::WorkloadCard Card(const std::string& arrival_extra) {
    auto c = card::ParseCard("traffic:\n  arrival: {process: trace, file: t.jsonl" + arrival_extra + "}\n",
                             (dir_ / "c.yaml").string());
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return c.ok() ? *c : card::WorkloadCard{};
  }
  SessionPlanner Planner(const card::WorkloadCard& c) {
    auto p = SessionPlanner::FromCard(c, GeneratorOptions{.seed = 5});
    EXPECT_TRUE(p.ok()) << p.status().ToString();
    return std::move(p).value();
  }
  std::filesystem::path dir_;
};

TEST_F(TraceSessionsTest, StepsParallelCallsAndTheirRelease) {
  SessionPlanner p = Planner(Card(", sessions: tasks, parallel_window: 100ms"));
  ASSERT_TRUE(p.enabled());
  EXPECT_TRUE(p.tasks());
  // The first steps, in arrival order: a's first call, b's, the lone call.
  std::vector<RequestSpec> starts;
  while (std::optional<RequestSpec> r = p.NextStart()) starts.push_back(*r);
  ASSERT_EQ(starts.size(), 3u);
  const RequestSpec a0 = starts[0], b0 = starts[1], lone = starts[2];
  EXPECT_EQ(a0.t_arrival, 0);
  EXPECT_EQ(b0.t_arrival, 500 * kNanosPerMilli);
  EXPECT_EQ(lone.t_arrival, 5 * kNanosPerSecond);
  EXPECT_NE(a0.session, b0.session);
  EXPECT_NE(lone.session, a0.session);
  EXPECT_NE(lone.session, b0.session);
  EXPECT_EQ(a0.turns, 3);  // [0 s] [2.0 s, 2.05 s] [4 s]
  EXPECT_EQ(a0.calls, 4);
  EXPECT_EQ(b0.turns, 1);
  EXPECT_EQ(lone.turns, 1);

  // b's only call ends: its session is over.
  SessionPlanner::CallEnd e = p.NextTurn(b0, true, 5);
  EXPECT_TRUE(e.session_over);
  EXPECT_TRUE(e.next.empty());

  // a's first call ends: both parallel calls follow, each not before its trace time.
  e = p.NextTurn(a0, true, 10);
  EXPECT_FALSE(e.session_over);
  ASSERT_EQ(e.next.size(), 2u);
  EXPECT_EQ(e.next[0].not_before, 2 * kNanosPerSecond);
  EXPECT_EQ(e.next[1].not_before, 2050 * kNanosPerMilli);
  EXPECT_EQ(e.next[0].delay, 0);
  const RequestSpec a1 = e.next[0].spec, a2 = e.next[1].spec;
  EXPECT_EQ(a1.turn, 1);
  EXPECT_EQ(a1.branch, 0);
  EXPECT_EQ(a2.branch, 1);
  EXPECT_EQ(a1.branches, 2);
  EXPECT_EQ(a1.input_tokens, 200);
  EXPECT_EQ(a2.output_tokens, 12);
  EXPECT_NE(a1.index, a2.index);

  // The step ends with its last call, whichever order they end in.
  e = p.NextTurn(a2, true, 12);
  EXPECT_FALSE(e.session_over);
  EXPECT_TRUE(e.next.empty());
  e = p.NextTurn(a1, true, 11);
  ASSERT_EQ(e.next.size(), 1u);
  EXPECT_EQ(e.next[0].not_before, 4 * kNanosPerSecond);
  const RequestSpec a3 = e.next[0].spec;
  EXPECT_EQ(a3.turn, 2);
  EXPECT_EQ(a3.input_tokens, 400);
  e = p.NextTurn(a3, true, 13);
  EXPECT_TRUE(e.session_over);
  EXPECT_TRUE(e.next.empty());
  EXPECT_EQ(p.open_steps(), 1u);  // the lone call's session is still open
  e = p.NextTurn(lone, true, 5);
  EXPECT_TRUE(e.session_over);
  EXPECT_EQ(p.open_steps(), 0u);

  // Prompts: a later call re-sends the session's stream; a later branch shares the stream
  // up to the step before's longest prompt (100 tokens: 6 whole blocks), then its own.
  ASSERT_EQ(a0.block_tokens, kSessionBlockTokens);
  ASSERT_GE(a3.block_ids.size(), a1.block_ids.size());
  for (size_t j = 0; j < a0.block_ids.size(); ++j) EXPECT_EQ(a3.block_ids[j], a0.block_ids[j]) << j;
  for (size_t j = 0; j < a1.block_ids.size(); ++j) EXPECT_EQ(a3.block_ids[j], a1.block_ids[j]) << j;
  for (size_t j = 0; j < 6; ++j) EXPECT_EQ(a2.block_ids[j], a0.block_ids[j]) << j;
  EXPECT_NE(a2.block_ids[6], a1.block_ids[6]);
  EXPECT_NE(b0.block_ids[0], a0.block_ids[0]);
}

TEST_F(TraceSessionsTest, WithoutAWindowOnlyEqualTimesAreParallel) {
  SessionPlanner p = Planner(Card(", sessions: sessions"));
  EXPECT_FALSE(p.tasks());
  std::optional<RequestSpec> a0 = p.NextStart();
  ASSERT_TRUE(a0);
  EXPECT_EQ(a0->turns, 4);
  SessionPlanner::CallEnd e = p.NextTurn(*a0, true, 10);
  ASSERT_EQ(e.next.size(), 1u);
  EXPECT_EQ(e.next[0].spec.branches, 1);
}

TEST_F(TraceSessionsTest, TheWindowIsOnTheTracesClockAndTimesOnTheReplays) {
  SessionPlanner p = Planner(Card(", speed: 2, sessions: sessions, parallel_window: 60ms"));
  std::optional<RequestSpec> a0 = p.NextStart();
  ASSERT_TRUE(a0);
  EXPECT_EQ(a0->turns, 3);  // 50 ms apart in the trace: one step
  SessionPlanner::CallEnd e = p.NextTurn(*a0, true, 10);
  ASSERT_EQ(e.next.size(), 2u);
  EXPECT_EQ(e.next[0].not_before, 1 * kNanosPerSecond);
  EXPECT_EQ(e.next[1].not_before, 1025 * kNanosPerMilli);
}

TEST_F(TraceSessionsTest, AFailedCallEndsItsSession) {
  SessionPlanner p = Planner(Card(", sessions: tasks, parallel_window: 100ms"));
  std::optional<RequestSpec> a0 = p.NextStart();
  ASSERT_TRUE(a0);
  SessionPlanner::CallEnd e = p.NextTurn(*a0, true, 10);
  ASSERT_EQ(e.next.size(), 2u);
  const RequestSpec a1 = e.next[0].spec, a2 = e.next[1].spec;
  e = p.NextTurn(a1, false, 0);  // its sibling still runs
  EXPECT_FALSE(e.session_over);
  e = p.NextTurn(a2, true, 12);
  EXPECT_TRUE(e.session_over);
  EXPECT_TRUE(e.next.empty());  // the 4 s call never runs
}

TEST_F(TraceSessionsTest, RefusedInAClosedLoopAndOnBadValues) {
  auto closed = SessionPlanner::FromCard(Card(", sessions: sessions"), GeneratorOptions{.closed_loop = true});
  ASSERT_FALSE(closed.ok());
  EXPECT_THAT(closed.status().message(), HasSubstr("open loop"));
  auto bad = card::ParseCard("traffic:\n  arrival: {process: trace, file: t.jsonl, sessions: yes}\n",
                             (dir_ / "c.yaml").string());
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("traffic.arrival.sessions"));
  auto poisson = card::ParseCard("traffic:\n  arrival: {process: poisson, rate: 2rps, sessions: tasks}\n", "c.yaml");
  ASSERT_FALSE(poisson.ok());
  EXPECT_THAT(poisson.status().message(), HasSubstr("only apply to process: trace"));
}

// No session ids, but hash_ids: the conversations they imply (trace/conversation_linker.h)
// are the sessions. A at 0 s and 2 s (the second re-sends A's whole blocks 0 and 1); B at
// 0.5 s and C at 3 s share only block 0, which A carries too.
TEST_F(TraceSessionsTest, WithoutSessionIdsHashIdsImplyTheConversations) {
  std::ofstream(dir_ / "h.jsonl") << "{\"timestamp\": 0, \"input_length\": 1300, \"output_length\": 10, \"hash_ids\": [0, 1, 2]}\n"
                                     "{\"timestamp\": 500, \"input_length\": 700, \"output_length\": 10, \"hash_ids\": [0, 3]}\n"
                                     "{\"timestamp\": 2000, \"input_length\": 1800, \"output_length\": 10, \"hash_ids\": [0, 1, 2, 4]}\n"
                                     "{\"timestamp\": 3000, \"input_length\": 600, \"output_length\": 10, \"hash_ids\": [0, 5]}\n";
  auto c = card::ParseCard("traffic:\n  arrival: {process: trace, file: h.jsonl, sessions: sessions}\n",
                           (dir_ / "c.yaml").string());
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  SessionPlanner p = Planner(*c);
  std::vector<RequestSpec> starts;
  while (std::optional<RequestSpec> r = p.NextStart()) starts.push_back(*r);
  ASSERT_EQ(starts.size(), 3u);  // A, B, C
  EXPECT_EQ(starts[0].turns, 2);
  EXPECT_EQ(starts[1].turns, 1);
  EXPECT_EQ(starts[2].turns, 1);
  EXPECT_EQ(starts[2].t_arrival, 3 * kNanosPerSecond);
  SessionPlanner::CallEnd e = p.NextTurn(starts[0], true, 10);
  ASSERT_EQ(e.next.size(), 1u);
  EXPECT_EQ(e.next[0].not_before, 2 * kNanosPerSecond);
  EXPECT_EQ(e.next[0].spec.input_tokens, 1800);
  // The trace's own blocks stay the prompt's: the follow-up re-sends A's.
  ASSERT_EQ(e.next[0].spec.block_ids.size(), 4u);
  EXPECT_EQ(e.next[0].spec.block_ids[1], starts[0].block_ids[1]);
}

TEST_F(TraceSessionsTest, NeitherSessionIdsNorHashIdsIsRefused) {
  std::ofstream(dir_ / "plain.jsonl") << "{\"timestamp\": 0, \"input_tokens\": 10, \"output_tokens\": 2}\n"
                                         "{\"timestamp\": 1, \"input_tokens\": 10, \"output_tokens\": 2}\n";
  auto c = card::ParseCard("traffic:\n  arrival: {process: trace, file: plain.jsonl, sessions: tasks}\n",
                           (dir_ / "c.yaml").string());
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  auto p = SessionPlanner::FromCard(*c, GeneratorOptions{.seed = 5});
  ASSERT_FALSE(p.ok());
  EXPECT_THAT(p.status().message(), HasSubstr("plain.jsonl has no session ids and no hash_ids"));
}

TEST_F(TraceSessionsTest, WithoutSessionsEveryRequestStandsAlone) {
  SessionPlanner p = Planner(Card(""));
  EXPECT_FALSE(p.enabled());
  int n = 0;
  while (std::optional<RequestSpec> r = p.NextStart()) {
    EXPECT_EQ(r->session, -1);
    ++n;
  }
  EXPECT_EQ(n, 6);
}

}  // namespace
}  // namespace infereng::workload
