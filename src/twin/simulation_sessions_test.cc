// Sessions and agent tasks in the twin: each next turn is released after the previous
// one ended plus think/tool time in virtual time, the conversation is re-sent (so the
// prefix cache sees it), and the summary folds calls into tasks.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "card/card_parser.h"
#include "twin/cost_model.h"
#include "twin/simulation.h"

namespace infereng::twin {
namespace {

card::WorkloadCard Card(const std::string& traffic, int duration_s = 40) {
  auto c = card::ParseCard("name: s\ntraffic:\n" + traffic + "bench:\n  duration: " + std::to_string(duration_s) +
                               "s\n  warmup: 0s\n  seed: 5\n",
                           "s.yaml");
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? *c : card::WorkloadCard{};
}

TwinSetup Twin(bool prefix_caching) {
  TwinSettings s;
  s.engine.kv_cache_tokens = 1 << 20;
  s.engine.max_num_seqs = 64;
  s.engine.enable_prefix_caching = prefix_caching;
  return ManualTwin(s, std::make_shared<LinearCostModel>(LinearCostOptions{.fixed_s = 0.01, .per_prefill_token_s = 20e-6}),
                    2.0);
}

SimulationResult Simulate(const card::WorkloadCard& c, bool prefix_caching = true) {
  SimulationOptions o;
  o.keep_records = true;
  o.drain_s = 120;
  auto r = RunSimulation(c, Twin(prefix_caching), o);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? std::move(r).value() : SimulationResult{};
}

constexpr const char* kAgent =
    "  arrival: 1rps\n  input_tokens: 300\n  output_tokens: {uniform: [10, 40]}\n"
    "  agent_steps: 4\n  agent_tool_time: 2s\n";  // a task takes over 6 s: the 40 s horizon cuts some

TEST(SimulationSessionsTest, TaskLatencyIsItsStepsPlusToolTime) {
  const SimulationResult r = Simulate(Card(kAgent));
  std::map<int64_t, std::vector<metrics::RequestRecord>> tasks;
  for (const metrics::RequestRecord& rec : r.records) {
    ASSERT_GE(rec.session, 0);
    tasks[rec.session].push_back(rec);
  }
  int checked = 0;
  for (auto& [id, steps] : tasks) {
    if (steps.size() != 4) continue;  // cut by the horizon
    std::sort(steps.begin(), steps.end(), [](const auto& a, const auto& b) { return a.turn < b.turn; });
    Nanos sum = 0;
    for (size_t k = 0; k < steps.size(); ++k) {
      ASSERT_TRUE(steps[k].ok());
      EXPECT_EQ(steps[k].turn, static_cast<int32_t>(k));
      sum += steps[k].t_end - steps[k].t_sched;
      if (k > 0) {  // released exactly the tool time after the previous step ended
        EXPECT_EQ(steps[k].t_sched, steps[k - 1].t_end + 2 * kNanosPerSecond);
        EXPECT_EQ(steps[k].prompt_tokens, steps[k - 1].prompt_tokens + steps[k - 1].completion_tokens + 64);
      }
    }
    EXPECT_EQ(steps.back().t_end - steps.front().t_sched, sum + 3 * 2 * kNanosPerSecond);
    ++checked;
  }
  EXPECT_GT(checked, 20);
  ASSERT_TRUE(r.summary.sessions.has_value());
  const metrics::SessionSummary& s = *r.summary.sessions;
  EXPECT_TRUE(s.tasks);
  EXPECT_EQ(s.succeeded, checked);
  EXPECT_EQ(s.failed, 0);
  EXPECT_EQ(s.started, s.succeeded + s.incomplete);
  EXPECT_GT(s.incomplete, 0);  // tasks the 40 s horizon cut
  EXPECT_DOUBLE_EQ(s.success_rate, 1.0);
  EXPECT_GE(s.latency_ms.min, 3 * 2000.0);
  EXPECT_EQ(s.calls.p50, 4);
}

// agent_parallel: 3: steps 1..3 are 3 calls each, released together the tool time after the
// previous step's LAST call ended; the task is its steps' slowest calls plus tool time; each
// call's prompt is S (the previous steps' messages and answers) + its own message, and the
// engine's prefix cache serves S to all three.
TEST(SimulationSessionsTest, ParallelStepsJoinAtTheirSlowestCallAndShareTheConversation) {
  const SimulationResult r = Simulate(Card(std::string(kAgent) + "  agent_parallel: 3\n"));
  std::map<int64_t, std::map<int32_t, std::vector<metrics::RequestRecord>>> tasks;
  for (const metrics::RequestRecord& rec : r.records) {
    ASSERT_GE(rec.session, 0);
    EXPECT_EQ(rec.calls, 1 + 3 * 3);
    EXPECT_EQ(rec.branches, rec.turn == 0 ? 1 : 3);
    tasks[rec.session][rec.turn].push_back(rec);
  }
  int checked = 0;
  int64_t later_cached = 0, later_prompt = 0;
  for (auto& [id, steps] : tasks) {
    size_t calls = 0;
    for (const auto& [turn, c] : steps) calls += c.size();
    if (calls != 10) continue;  // cut by the horizon
    Nanos sum = 0, prev_end = -1;
    int64_t prev_sum_len = 0;  // S after the previous step
    for (auto& [turn, c] : steps) {
      Nanos step_end = 0;
      for (const metrics::RequestRecord& rec : c) {
        ASSERT_TRUE(rec.ok());
        EXPECT_EQ(rec.t_sched, c.front().t_sched) << "a step's calls are released together";
        step_end = std::max(step_end, rec.t_end);
        if (turn > 0) {
          EXPECT_EQ(rec.t_sched, prev_end + 2 * kNanosPerSecond) << "after the previous step's last call";
          EXPECT_EQ(rec.prompt_tokens - prev_sum_len, 64) << "S + its own message (default 64)";
          later_cached += rec.cached_tokens;
          later_prompt += rec.prompt_tokens;
        }
      }
      int64_t s_next = turn == 0 ? 0 : prev_sum_len;
      for (const metrics::RequestRecord& rec : c) s_next += (rec.prompt_tokens - (turn == 0 ? 0 : prev_sum_len)) + rec.completion_tokens;
      prev_sum_len = s_next;
      sum += step_end - c.front().t_sched;
      prev_end = step_end;
    }
    EXPECT_EQ(prev_end - steps.begin()->second.front().t_sched, sum + 3 * 2 * kNanosPerSecond);
    ++checked;
  }
  EXPECT_GT(checked, 10);
  // S is most of every later prompt and every call of a step re-sends it: the cache hits.
  EXPECT_GT(static_cast<double>(later_cached) / static_cast<double>(later_prompt), 0.5);
  ASSERT_TRUE(r.summary.sessions.has_value());
  const metrics::SessionSummary& s = *r.summary.sessions;
  EXPECT_EQ(s.succeeded, checked);
  EXPECT_EQ(s.failed, 0);
  EXPECT_EQ(s.calls.p50, 10);
}

TEST(SimulationSessionsTest, PrefixHitRateRisesWithTurns) {
  const SimulationResult r = Simulate(Card(
      "  arrival: 0.5rps\n  input_tokens: 400\n  output_tokens: 50\n"
      "  sessions: {turns: 5, think_time: 1s, new_message_tokens: 40}\n"));
  ASSERT_TRUE(r.summary.sessions.has_value());
  const auto& by_turn = r.summary.sessions->by_turn;
  ASSERT_EQ(by_turn.size(), 5u);
  EXPECT_LT(by_turn[0].prefix_hit_rate, 0.05);  // a new conversation: nothing to reuse
  for (size_t k = 1; k < by_turn.size(); ++k) {
    // Turn k re-sends turn k-1's prompt: at least that share of it is cached (the answer
    // tokens are a stand-in the engine never saw, so they miss).
    EXPECT_GT(by_turn[k].prefix_hit_rate, by_turn[k - 1].prefix_hit_rate) << "turn " << k;
  }
  EXPECT_GT(by_turn[4].prefix_hit_rate, 0.6);
  const SimulationResult off = Simulate(Card(
      "  arrival: 0.5rps\n  input_tokens: 400\n  output_tokens: 50\n"
      "  sessions: {turns: 5, think_time: 1s, new_message_tokens: 40}\n"), false);
  EXPECT_LT(off.summary.sessions->prefix_hit_rate, 0.01);
}

TEST(SimulationSessionsTest, ClosedLoopUsersRunOneSessionAtATime) {
  const SimulationResult r = Simulate(Card(
      "  concurrency: 3\n  input_tokens: 100\n  output_tokens: 20\n"
      "  sessions: {turns: 3, think_time: 2s, new_message_tokens: 10}\n", 30));
  // Sessions active (first send .. last end) at any time: never more than 3 users.
  std::map<int64_t, std::pair<Nanos, Nanos>> span;
  for (const metrics::RequestRecord& rec : r.records) {
    auto [it, fresh] = span.try_emplace(rec.session, rec.t_send, rec.t_end);
    if (!fresh) {
      it->second.first = std::min(it->second.first, rec.t_send);
      it->second.second = std::max(it->second.second, rec.t_end);
    }
  }
  std::vector<std::pair<Nanos, int>> events;
  for (const auto& [id, s] : span) {
    events.emplace_back(s.first, 1);
    events.emplace_back(s.second, -1);
  }
  std::sort(events.begin(), events.end());  // an end sorts before a start at the same time
  int active = 0, peak = 0;
  for (const auto& [t, d] : events) peak = std::max(peak, active += d);
  EXPECT_EQ(peak, 3);
  EXPECT_GT(span.size(), 6u);
}

// Closed loop with parallel steps: a user is busy until its task's last call ends, so up to
// 3 x 2 calls run at once but never more than 3 tasks.
TEST(SimulationSessionsTest, ClosedLoopUsersHoldThroughParallelSteps) {
  const SimulationResult r = Simulate(Card(
      "  concurrency: 3\n  input_tokens: 100\n  output_tokens: 20\n"
      "  agent_steps: 3\n  agent_tool_time: 500ms\n  agent_parallel: 2\n", 30));
  std::map<int64_t, std::pair<Nanos, Nanos>> span;
  std::vector<std::pair<Nanos, int>> calls;
  for (const metrics::RequestRecord& rec : r.records) {
    auto [it, fresh] = span.try_emplace(rec.session, rec.t_send, rec.t_end);
    if (!fresh) {
      it->second.first = std::min(it->second.first, rec.t_send);
      it->second.second = std::max(it->second.second, rec.t_end);
    }
    calls.emplace_back(rec.t_send, 1);
    calls.emplace_back(rec.t_end, -1);
  }
  std::vector<std::pair<Nanos, int>> events;
  for (const auto& [id, s] : span) {
    events.emplace_back(s.first, 1);
    events.emplace_back(s.second, -1);
  }
  auto peak_of = [](std::vector<std::pair<Nanos, int>> e) {
    std::sort(e.begin(), e.end());
    int active = 0, peak = 0;
    for (const auto& [t, d] : e) peak = std::max(peak, active += d);
    return peak;
  };
  EXPECT_EQ(peak_of(events), 3);
  EXPECT_EQ(peak_of(calls), 6) << "3 users x 2 parallel calls";
  ASSERT_TRUE(r.summary.sessions.has_value());
  EXPECT_GT(r.summary.sessions->succeeded, 6);
  EXPECT_EQ(r.summary.sessions->calls.p50, 5);
}

}  // namespace
}  // namespace infereng::twin
