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
    auto f = p.NextTurn(*r, true, answer(r->turn));
    if (!f) break;
    if (delays) delays->push_back(f->delay);
    r = f->spec;
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
    b2 = b.NextTurn(b2, true, 25)->spec;
    b1 = b.NextTurn(b1, true, 25)->spec;
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
  EXPECT_FALSE(p.NextTurn(first, /*ok=*/false, 30).has_value());
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
    EXPECT_FALSE(p.NextTurn(a, true, 10).has_value());
  }
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
