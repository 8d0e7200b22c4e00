#include "workload/sessions.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <vector>

#include "card/card_parser.h"

namespace infereng::workload {
namespace {

using ::testing::HasSubstr;

constexpr const char* kSessions =
    "traffic:\n"
    "  arrival: 2rps\n"
    "  input_tokens: 100\n"
    "  output_tokens: {uniform: [20, 60]}\n"
    "  sessions: {turns: 4, think_time: 2s, new_message_tokens: {uniform: [10, 40]}}\n";

card::WorkloadCard Card(const std::string& yaml) {
  auto c = card::ParseCard(yaml, "s.yaml");
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? *c : card::WorkloadCard{};
}

SessionPlanner Planner(const card::WorkloadCard& c, uint64_t seed = 3) {
  auto p = SessionPlanner::FromCard(c, GeneratorOptions{.seed = seed});
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return std::move(p).value();
}

// Runs one session to its end, each answer `answer(turn)` tokens long.
std::vector<RequestSpec> RunSession(SessionPlanner& p, const std::function<int64_t(int32_t)>& answer,
                                    std::vector<Nanos>* delays = nullptr) {
  std::vector<RequestSpec> turns;
  std::optional<RequestSpec> r = p.NextStart();
  while (r) {
    turns.push_back(*r);
    SessionPlanner::CallEnd e = p.NextTurn(*r, true, answer(r->turn));
    if (e.next.empty()) {
      EXPECT_TRUE(e.session_over);
      break;
    }
    EXPECT_EQ(e.next.size(), 1u) << "one call per step without agent_parallel";
    if (delays) delays->push_back(e.next[0].delay);
    r = e.next[0].spec;
  }
  return turns;
}

TEST(SessionPlannerTest, EachTurnResendsThePreviousPromptAndAnswer) {
  SessionPlanner p = Planner(Card(kSessions));
  ASSERT_TRUE(p.enabled());
  std::vector<Nanos> delays;
  const std::vector<RequestSpec> turns = RunSession(p, [](int32_t t) { return 30 + 7 * t; }, &delays);
  ASSERT_EQ(turns.size(), 4u);
  for (size_t k = 1; k < turns.size(); ++k) {
    const RequestSpec& prev = turns[k - 1];
    const RequestSpec& cur = turns[k];
    EXPECT_EQ(cur.session, prev.session);
    EXPECT_EQ(cur.turn, static_cast<int32_t>(k));
    const int64_t resent = prev.input_tokens + 30 + 7 * prev.turn;  // prompt + answer
    const int64_t message = cur.input_tokens - resent;
    EXPECT_GE(message, 10) << "turn " << k;
    EXPECT_LE(message, 40) << "turn " << k;
    // Turn k's token stream starts with turn k-1's whole prompt and answer: every block
    // covering those tokens is the same block.
    ASSERT_EQ(cur.block_tokens, kSessionBlockTokens);
    const size_t shared = static_cast<size_t>(resent / kSessionBlockTokens);
    ASSERT_GE(cur.block_ids.size(), shared);
    EXPECT_TRUE(std::equal(prev.block_ids.begin(), prev.block_ids.end(), cur.block_ids.begin()));
    EXPECT_EQ(cur.block_ids.size(), static_cast<size_t>((cur.input_tokens + 15) / 16));
    EXPECT_NE(cur.index, prev.index);
  }
  for (Nanos d : delays) EXPECT_EQ(d, 2 * kNanosPerSecond);
}

TEST(SessionPlannerTest, SameSeedSameConversationsWhateverTheOrderTurnsEnd) {
  const card::WorkloadCard c = Card(kSessions);
  SessionPlanner a = Planner(c), b = Planner(c);
  // a: sessions one after the other; b: both first turns, then both seconds (interleaved).
  std::vector<RequestSpec> a1 = RunSession(a, [](int32_t) { return 25; });
  std::vector<RequestSpec> a2 = RunSession(a, [](int32_t) { return 25; });
  RequestSpec b1 = *b.NextStart(), b2 = *b.NextStart();
  for (size_t k = 1; k < a1.size(); ++k) {
    b2 = b.NextTurn(b2, true, 25).next.at(0).spec;
    b1 = b.NextTurn(b1, true, 25).next.at(0).spec;
    EXPECT_EQ(b1.input_tokens, a1[k].input_tokens);
    EXPECT_EQ(b1.output_tokens, a1[k].output_tokens);
    EXPECT_EQ(b1.block_ids, a1[k].block_ids);
    EXPECT_EQ(b2.input_tokens, a2[k].input_tokens);
  }
  EXPECT_NE(a1[0].block_ids.front(), a2[0].block_ids.front());  // sessions do not share text
}

TEST(SessionPlannerTest, AFailedTurnOrTheContextLimitEndsTheSession) {
  SessionPlanner p = Planner(Card(kSessions));
  RequestSpec first = *p.NextStart();
  SessionPlanner::CallEnd e = p.NextTurn(first, /*ok=*/false, 30);
  EXPECT_TRUE(e.next.empty());
  EXPECT_TRUE(e.session_over);
  EXPECT_EQ(p.open_steps(), 0u);
  SessionPlanner capped = Planner(Card(std::string(kSessions) + "product:\n  max_input_tokens: 150\n"));
  const std::vector<RequestSpec> turns = RunSession(capped, [](int32_t) { return 60; });
  EXPECT_EQ(turns.size(), 1u);  // 100 + 60 + >= 10 > 150
  EXPECT_EQ(turns[0].turns, 4);
}

TEST(SessionPlannerTest, SharedPrefixBlocksAreSharedAcrossSessions) {
  SessionPlanner p = Planner(Card(std::string(kSessions) + "  prefix: {share: 1, tokens: 48, distinct: 1}\n"));
  RequestSpec a = *p.NextStart(), b = *p.NextStart();
  ASSERT_EQ(a.prefix_id, b.prefix_id);
  EXPECT_TRUE(std::equal(a.block_ids.begin(), a.block_ids.begin() + 3, b.block_ids.begin()));
  EXPECT_NE(a.block_ids[3], b.block_ids[3]);
}

TEST(SessionPlannerTest, AgentStepsAreTasksWithToolTimeBetweenSteps) {
  SessionPlanner p = Planner(Card(
      "traffic:\n  arrival: 1rps\n  input_tokens: 200\n  output_tokens: 20\n"
      "  agent_steps: 3\n  agent_tool_time: 400ms\n"));
  EXPECT_TRUE(p.tasks());
  std::vector<Nanos> delays;
  const std::vector<RequestSpec> steps = RunSession(p, [](int32_t) { return 20; }, &delays);
  ASSERT_EQ(steps.size(), 3u);
  EXPECT_EQ(steps[0].turns, 3);
  EXPECT_EQ(delays, (std::vector<Nanos>{400 * kNanosPerMilli, 400 * kNanosPerMilli}));
  EXPECT_EQ(steps[1].input_tokens, 200 + 20 + 64);  // default tool result: 64 tokens
}

TEST(SessionPlannerTest, WithoutSessionsThePlannerIsTheGenerator) {
  const card::WorkloadCard c = Card("traffic:\n  arrival: 5rps\n  input_tokens: 100\n  output_tokens: 10\n");
  SessionPlanner p = Planner(c, 9);
  auto g = Generator::FromCard(c, GeneratorOptions{.seed = 9});
  ASSERT_TRUE(g.ok());
  for (int i = 0; i < 20; ++i) {
    RequestSpec a = *p.NextStart(), b = *g->Next();
    EXPECT_EQ(a.index, b.index);
    EXPECT_EQ(a.t_arrival, b.t_arrival);
    EXPECT_EQ(a.session, -1);
    EXPECT_TRUE(a.block_ids.empty());
    EXPECT_TRUE(p.NextTurn(a, true, 10).next.empty());
  }
}

// agent_parallel: 3 fans every step after the first out to 3 calls released together; the
// step joins when its last call ends (in any order), and the next step's conversation is
// S + every call's message and answer. Branch 0 continues the session's stream; the other
// branches share S's whole blocks and then have their own.
TEST(SessionPlannerTest, ParallelCallsShareTheConversationAndJoinAtTheLastCall) {
  SessionPlanner p = Planner(Card(
      "traffic:\n  arrival: 1rps\n  input_tokens: 200\n  output_tokens: {uniform: [10, 50]}\n"
      "  agent_steps: 3\n  agent_tool_time: 400ms\n  agent_parallel: 3\n"
      "  sessions: {new_message_tokens: {uniform: [20, 90]}}\n"));
  RequestSpec first = *p.NextStart();
  EXPECT_EQ(first.turns, 3);
  EXPECT_EQ(first.calls, 1 + 3 + 3);
  EXPECT_EQ(first.branches, 1);
  SessionPlanner::CallEnd e = p.NextTurn(first, true, 40);
  ASSERT_EQ(e.next.size(), 3u);
  EXPECT_FALSE(e.session_over);
  const int64_t s1 = 200 + 40;  // S before step 1
  std::vector<RequestSpec> step;
  for (int b = 0; b < 3; ++b) {
    const RequestSpec& r = e.next[static_cast<size_t>(b)].spec;
    EXPECT_EQ(e.next[static_cast<size_t>(b)].delay, 400 * kNanosPerMilli) << "released together, after the tool time";
    EXPECT_EQ(r.turn, 1);
    EXPECT_EQ(r.branch, b);
    EXPECT_EQ(r.branches, 3);
    EXPECT_EQ(r.calls, 7);
    EXPECT_GE(r.input_tokens - s1, 20) << "branch " << b << ": S + its own message";
    EXPECT_LE(r.input_tokens - s1, 90);
    EXPECT_EQ(r.block_ids.size(), static_cast<size_t>((r.input_tokens + 15) / 16));
    // The first prompt is re-sent by every branch.
    EXPECT_TRUE(std::equal(first.block_ids.begin(), first.block_ids.end(), r.block_ids.begin()));
    step.push_back(r);
  }
  // S's whole blocks are the same in every branch; after them each branch has its own.
  const size_t shared = static_cast<size_t>(s1 / kSessionBlockTokens);
  for (int b = 1; b < 3; ++b) {
    EXPECT_TRUE(std::equal(step[0].block_ids.begin(), step[0].block_ids.begin() + static_cast<long>(shared),
                           step[static_cast<size_t>(b)].block_ids.begin()));
    EXPECT_NE(step[0].block_ids[shared], step[static_cast<size_t>(b)].block_ids[shared]) << "branch " << b;
  }
  EXPECT_NE(step[0].index, step[1].index);
  EXPECT_FALSE(step[0].input_tokens == step[1].input_tokens && step[1].input_tokens == step[2].input_tokens &&
               step[0].output_tokens == step[1].output_tokens && step[1].output_tokens == step[2].output_tokens)
      << "branches draw their own lengths";
  // Ends out of order: no next step until the last one; answers 11, 22, 33.
  SessionPlanner::CallEnd e2 = p.NextTurn(step[2], true, 33);
  EXPECT_TRUE(e2.next.empty());
  EXPECT_FALSE(e2.session_over);
  e2 = p.NextTurn(step[0], true, 11);
  EXPECT_TRUE(e2.next.empty());
  EXPECT_FALSE(e2.session_over);
  e2 = p.NextTurn(step[1], true, 22);
  ASSERT_EQ(e2.next.size(), 3u);
  const int64_t s2 = s1 + (step[0].input_tokens - s1 + 11) + (step[1].input_tokens - s1 + 22) +
                     (step[2].input_tokens - s1 + 33);
  std::vector<RequestSpec> last;
  for (const SessionPlanner::FollowUp& f : e2.next) last.push_back(f.spec);
  for (const RequestSpec& r : last) {
    EXPECT_EQ(r.turn, 2);
    EXPECT_GE(r.input_tokens - s2, 20);
    EXPECT_LE(r.input_tokens - s2, 90);
  }
  // The next step re-sends branch 0's whole prompt (the session's stream), not branch 1's.
  EXPECT_TRUE(std::equal(step[0].block_ids.begin(), step[0].block_ids.end(), last[0].block_ids.begin()));
  EXPECT_NE(step[1].block_ids.back(), last[0].block_ids[step[1].block_ids.size() - 1]);
  // The last step: nothing follows it; the task is over once its last call is in.
  EXPECT_FALSE(p.NextTurn(last[1], false, 5).session_over);
  EXPECT_FALSE(p.NextTurn(last[0], true, 5).session_over);
  EXPECT_EQ(p.open_steps(), 1u);
  SessionPlanner::CallEnd end = p.NextTurn(last[2], true, 5);
  EXPECT_TRUE(end.next.empty());
  EXPECT_TRUE(end.session_over);
  EXPECT_EQ(p.open_steps(), 0u);
}

TEST(SessionPlannerTest, ParallelFailureEndsTheTaskAfterTheStepAndPlannedCallsAreKnownAtTheStart) {
  SessionPlanner p = Planner(Card(
      "traffic:\n  arrival: 1rps\n  input_tokens: 100\n  output_tokens: 10\n"
      "  agent_steps: 4\n  agent_parallel: {uniform: [1, 4]}\n"));
  RequestSpec first = *p.NextStart();
  // Run it to the end and count: the planned calls are what runs.
  int64_t ran = 1;
  std::vector<RequestSpec> open = {first};
  while (!open.empty()) {
    std::vector<RequestSpec> next;
    for (const RequestSpec& r : open) {
      SessionPlanner::CallEnd e = p.NextTurn(r, true, 10);
      for (auto& f : e.next) next.push_back(f.spec);
      if (&r != &open.back()) {
        EXPECT_TRUE(e.next.empty() && !e.session_over);
      } else {
        EXPECT_EQ(e.session_over, e.next.empty());
      }
    }
    ran += static_cast<int64_t>(next.size());
    for (const RequestSpec& r : next) EXPECT_EQ(r.branches, static_cast<int32_t>(next.size()));
    open = next;
  }
  EXPECT_EQ(ran, first.calls);
  EXPECT_EQ(p.open_steps(), 0u);

  // A failure in a step of 2: the sibling's end closes the task, with no next step.
  SessionPlanner q = Planner(Card(
      "traffic:\n  arrival: 1rps\n  input_tokens: 100\n  output_tokens: 10\n"
      "  agent_steps: 3\n  agent_parallel: 2\n"));
  RequestSpec f0 = *q.NextStart();
  SessionPlanner::CallEnd e = q.NextTurn(f0, true, 10);
  ASSERT_EQ(e.next.size(), 2u);
  SessionPlanner::CallEnd a = q.NextTurn(e.next[0].spec, false, 10);
  EXPECT_TRUE(a.next.empty());
  EXPECT_FALSE(a.session_over) << "the sibling still runs";
  SessionPlanner::CallEnd b = q.NextTurn(e.next[1].spec, true, 10);
  EXPECT_TRUE(b.next.empty());
  EXPECT_TRUE(b.session_over);
  EXPECT_EQ(q.open_steps(), 0u);
}

TEST(SessionCardTest, BadSessionFieldsNameFileAndLine) {
  struct Case {
    std::string yaml, where, what;
  } cases[] = {
      {"traffic:\n  arrival: 1rps\n  sessions: {turns: 0}\n", "s.yaml:3", "traffic.sessions.turns"},
      {"traffic:\n  arrival: 1rps\n  sessions:\n    think_time: -2s\n", "s.yaml:4", "traffic.sessions.think_time"},
      {"traffic:\n  arrival: 1rps\n  sessions:\n    new_message_tokens: {uniform: [5, 1]}\n", "s.yaml:4",
       "traffic.sessions.new_message_tokens"},
      {"traffic:\n  arrival: 1rps\n  sessions: [1, 2]\n", "s.yaml:3", "traffic.sessions"},
      {"traffic:\n  arrival: 1rps\n  sessions: {turn: 3}\n", "s.yaml:3", "turn"},
      {"traffic:\n  arrival: 1rps\n  agent_steps: 3\n  sessions: {turns: 2}\n", "s.yaml:3", "keep one"},
      {"traffic:\n  arrival: 1rps\n  agent_parallel: 2\n", "s.yaml:3", "needs agent_steps"},
      {"traffic:\n  arrival: 1rps\n  agent_steps: 3\n  agent_parallel: 2\n  sessions: {parallel: 3}\n", "s.yaml:4",
       "keep one"},
      {"traffic:\n  arrival: 1rps\n  agent_steps: 3\n  agent_parallel: 0\n", "s.yaml", "traffic.agent_parallel"},
      {"traffic:\n  arrival: 1rps\n  sessions: {turns: 2, parallel: 300}\n", "s.yaml", "traffic.sessions.parallel"},
  };
  for (const Case& c : cases) {
    auto card = card::ParseCard(c.yaml, "s.yaml");
    ASSERT_FALSE(card.ok()) << c.yaml;
    EXPECT_THAT(card.status().message(), HasSubstr(c.where)) << c.yaml;
    EXPECT_THAT(card.status().message(), HasSubstr(c.what)) << c.yaml;
  }
}

}  // namespace
}  // namespace infereng::workload
