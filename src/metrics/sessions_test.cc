#include "metrics/sessions.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "metrics/record_json_writer.h"
#include "metrics/records_io.h"
#include "metrics/summary.h"
#include "metrics/summary_json.h"

namespace infereng::metrics {
namespace {

constexpr Nanos kMs = kNanosPerMilli;

// One call of session `s`: turn `turn` of `turns`, scheduled at `sched` ms, ending at `end` ms.
RequestRecord Call(int64_t s, int32_t turn, int32_t turns, double sched, double end,
                   ErrorClass error = ErrorClass::kNone, int64_t prompt = 100, int64_t cached = 0) {
  RequestRecord r;
  r.id = static_cast<uint64_t>(s * 100 + turn);
  r.session = s;
  r.turn = turn;
  r.turns = turns;
  r.t_sched = static_cast<Nanos>(sched * kMs);
  r.t_send = r.t_sched;
  r.t_end = static_cast<Nanos>(end * kMs);
  r.error = error;
  r.prompt_tokens = prompt;
  r.cached_tokens = cached;
  r.completion_tokens = 10;
  return r;
}

SessionTallyOptions Window(double end_ms, std::optional<double> task_ms = std::nullopt) {
  SessionTallyOptions o;
  o.window_start = 0;
  o.window_end = static_cast<Nanos>(end_ms * kMs);
  o.task_ms = task_ms;
  return o;
}

// The hand-made tasks of the test below, in completion order.
void AddHandMadeTasks(SessionTally& t) {
  // Task 1: three steps of 100, 200 and 300 ms with 50 ms of tool time between them.
  t.Add(Call(1, 0, 3, 0, 100));
  // Task 2: its second step failed (the third never ran).
  t.Add(Call(2, 0, 3, 10, 60));
  // Task 3: interrupted in flight (Ctrl-C): incomplete, not failed.
  t.Add(Call(3, 0, 3, 20, 80));
  // Task 4: the window ended before its last step was sent (still open at Finish).
  t.Add(Call(4, 0, 2, 30, 90));
  t.Add(Call(2, 1, 3, 110, 120, ErrorClass::kHttp5xx));
  t.Add(Call(3, 1, 3, 130, 140, ErrorClass::kInterrupted));
  t.Add(Call(1, 1, 3, 150, 350, ErrorClass::kNone, 200, 96));
  t.Add(Call(1, 2, 3, 400, 700, ErrorClass::kNone, 300, 192));
  // Task 5: started after the window: not counted.
  t.Add(Call(5, 0, 1, 5000, 5100));
  // A call outside any session is ignored.
  RequestRecord single = Call(-1, 0, 1, 0, 10);
  t.Add(single);
}

TEST(SessionTallyTest, HandMadeTasksLatencyIsStepsPlusToolTimeAndOutcomesAreSeparated) {
  SessionTally t(Window(1000, /*task_ms=*/650.0));
  AddHandMadeTasks(t);
  EXPECT_EQ(t.open_sessions(), 1u);  // task 4: the ended ones are folded and forgotten

  const SessionSummary s = t.Finish(/*rate_basis_s=*/2.0, /*tasks=*/true, 0.5);
  EXPECT_TRUE(s.tasks);
  EXPECT_EQ(s.started, 4);
  EXPECT_EQ(s.succeeded, 1);
  EXPECT_EQ(s.failed, 1);
  EXPECT_EQ(s.incomplete, 2);
  EXPECT_DOUBLE_EQ(s.success_rate, 0.5);
  // 100 + 200 + 300 (each step from its t_sched) + 2 x 50 ms tool time = 700 ms.
  ASSERT_EQ(s.latency_ms.count, 1);
  EXPECT_DOUBLE_EQ(s.latency_ms.p50, 100 + 200 + 300 + 2 * 50);
  EXPECT_EQ(s.good, 0);  // 700 ms > slo.task 650 ms
  EXPECT_DOUBLE_EQ(s.task_attainment, 0);
  EXPECT_FALSE(s.task_slo_pass);
  EXPECT_DOUBLE_EQ(s.per_s, 0.5);
  EXPECT_DOUBLE_EQ(s.goodput_per_s, 0);
  EXPECT_DOUBLE_EQ(s.calls.p50, 3);
  // Prefix reuse over the window's successful session calls: (0+96+192+0+0+0) / (100+200+300+100+100+100).
  EXPECT_NEAR(s.prefix_hit_rate, 288.0 / 900.0, 1e-12);
  ASSERT_EQ(s.by_turn.size(), 3u);
  EXPECT_EQ(s.by_turn[0].calls, 4);
  EXPECT_DOUBLE_EQ(s.by_turn[0].prefix_hit_rate, 0);
  EXPECT_DOUBLE_EQ(s.by_turn[1].prefix_hit_rate, 96.0 / 200.0);
  EXPECT_DOUBLE_EQ(s.by_turn[2].prefix_hit_rate, 192.0 / 300.0);
  EXPECT_DOUBLE_EQ(s.by_turn[2].e2e_p50_ms, 300);
  EXPECT_EQ(t.Finish(2.0, true, 0.5), s);  // Finish does not consume

  SessionTally lax(Window(1000, 800.0));
  AddHandMadeTasks(lax);
  const SessionSummary l = lax.Finish(2.0, true, 0.5);
  EXPECT_EQ(l.good, 1);
  EXPECT_TRUE(l.task_slo_pass);  // 1 of 2 ended tasks within 800 ms >= 50%

  // The window's end excludes task 1..4 when it falls before their first calls.
  SessionTally early(Window(5));
  AddHandMadeTasks(early);
  EXPECT_EQ(early.Finish(2.0, true, 0.5).started, 1);  // task 1 only (t_sched 0)
}

// A long run of short sessions, 8 open at a time: the tally holds only the open ones, and a
// histogram-mode tally agrees with the exact one within the histogram's stated error.
TEST(SessionTallyTest, MemoryHoldsOnlyOpenSessionsAndHistogramModeAgrees) {
  SessionTallyOptions exact_opt;
  SessionTallyOptions hist_opt;
  hist_opt.exact = false;
  SessionTally exact(exact_opt), hist(hist_opt);
  constexpr int kSessions = 20000, kOpen = 8, kTurns = 3;
  size_t max_open = 0;
  // Groups of kOpen sessions in progress together, turn by turn.
  for (int g = 0; g < kSessions / kOpen; ++g) {
    for (int turn = 0; turn < kTurns; ++turn) {
      for (int k = 0; k < kOpen; ++k) {
        const int s = g * kOpen + k;
        const double base = s * 10.0 + turn * 40.0;
        const RequestRecord r = Call(s, turn, kTurns, base, base + 30 + (s % 97), ErrorClass::kNone,
                                     100 * (turn + 1), 50 * turn);
        exact.Add(r);
        hist.Add(r);
        max_open = std::max(max_open, exact.open_sessions());
      }
    }
  }
  EXPECT_EQ(max_open, static_cast<size_t>(kOpen));
  EXPECT_EQ(exact.open_sessions(), 0u);
  const SessionSummary e = exact.Finish(100, false, 0.9), h = hist.Finish(100, false, 0.9);
  EXPECT_EQ(e.succeeded, kSessions);
  EXPECT_EQ(h.succeeded, kSessions);
  ASSERT_EQ(h.by_turn.size(), 3u);
  EXPECT_DOUBLE_EQ(h.prefix_hit_rate, e.prefix_hit_rate);
  EXPECT_NEAR(h.latency_ms.p99, e.latency_ms.p99, e.latency_ms.p99 * 0.02);
  EXPECT_NEAR(h.by_turn[2].e2e_p50_ms, e.by_turn[2].e2e_p50_ms, e.by_turn[2].e2e_p50_ms * 0.02);
}

TEST(SessionTallyTest, SummaryCarriesTheBlockThroughJsonAndFailsTheVerdictOnATaskMiss) {
  AccumulatorOptions o;
  o.slo.task_ms = 100;
  o.session_tasks = true;
  SummaryAccumulator acc(o);
  acc.Add(Call(1, 0, 2, 0, 100));
  acc.Add(Call(1, 1, 2, 150, 250, ErrorClass::kNone, 200, 96));
  const Summary s = acc.Finish();
  ASSERT_TRUE(s.sessions.has_value());
  EXPECT_FALSE(s.sessions->task_slo_pass);
  EXPECT_FALSE(s.slo_pass);
  auto back = SummaryFromJson(SummaryToJson(s));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_TRUE(back->sessions.has_value());
  EXPECT_EQ(*back->sessions, *s.sessions);

  SummaryAccumulator plain{AccumulatorOptions{}};
  plain.Add(Call(-1, 0, 1, 0, 100));
  EXPECT_FALSE(plain.Finish().sessions.has_value());
  EXPECT_FALSE(SummaryToJson(plain.Finish()).contains("sessions"));
}

// One call of a task with parallel steps: branch `branch` of `branches`, `calls` planned.
RequestRecord Branch(int64_t s, int32_t turn, int32_t turns, int32_t branch, int32_t branches, int32_t calls,
                     double sched, double end, ErrorClass error = ErrorClass::kNone) {
  RequestRecord r = Call(s, turn, turns, sched, end, error);
  r.id = static_cast<uint64_t>(s * 100 + turn * 10 + branch);
  r.branch = branch;
  r.branches = branches;
  r.calls = calls;
  return r;
}

// Tasks of 3 steps, the later two of 3 parallel calls (7 calls): the task lasts from its
// first t_sched to its last call's end, a step lasting until its slowest call; calls ending
// in any order; a failed call's task is folded once its step's other calls are in.
TEST(SessionTallyTest, ParallelStepsLastUntilTheirSlowestCallAndFailuresFoldAfterTheStep) {
  SessionTally t(Window(1000));
  // Task 1: step 0 0..100 ms; tool 50 ms; step 1 150..{210, 350, 260}; tool 50 ms;
  // step 2 400..{500, 450, 700}: 700 ms = 100 + 200 (slowest) + 300 (slowest) + 2 x 50.
  t.Add(Branch(1, 0, 3, 0, 1, 7, 0, 100));
  t.Add(Branch(1, 1, 3, 0, 3, 7, 150, 210));
  t.Add(Branch(1, 1, 3, 2, 3, 7, 150, 260));
  t.Add(Branch(1, 1, 3, 1, 3, 7, 150, 350));
  t.Add(Branch(1, 2, 3, 1, 3, 7, 400, 450));
  t.Add(Branch(1, 2, 3, 0, 3, 7, 400, 500));
  EXPECT_EQ(t.open_sessions(), 1u) << "6 of 7 calls: still open";
  t.Add(Branch(1, 2, 3, 2, 3, 7, 400, 700));
  EXPECT_EQ(t.open_sessions(), 0u);
  // Task 2: a call of step 1 fails first; the task stays open until its siblings are in.
  t.Add(Branch(2, 0, 3, 0, 1, 7, 10, 60));
  t.Add(Branch(2, 1, 3, 1, 3, 7, 110, 130, ErrorClass::kHttp5xx));
  EXPECT_EQ(t.open_sessions(), 1u);
  t.Add(Branch(2, 1, 3, 0, 3, 7, 110, 150));
  EXPECT_EQ(t.open_sessions(), 1u);
  t.Add(Branch(2, 1, 3, 2, 3, 7, 110, 170));
  EXPECT_EQ(t.open_sessions(), 0u) << "the failing step's calls are all in";
  // Task 3: all 3 calls of step 1 done, step 2 never sent: incomplete.
  t.Add(Branch(3, 0, 3, 0, 1, 7, 20, 40));
  for (int b = 0; b < 3; ++b) t.Add(Branch(3, 1, 3, b, 3, 7, 90, 120));

  const SessionSummary s = t.Finish(/*rate_basis_s=*/1.0, /*tasks=*/true, 0.5);
  EXPECT_EQ(s.started, 3);
  EXPECT_EQ(s.succeeded, 1);
  EXPECT_EQ(s.failed, 1);
  EXPECT_EQ(s.incomplete, 1);
  ASSERT_EQ(s.latency_ms.count, 1);
  EXPECT_DOUBLE_EQ(s.latency_ms.p50, 100 + 200 + 300 + 2 * 50);
  EXPECT_DOUBLE_EQ(s.calls.p50, 7);
  ASSERT_GE(s.by_turn.size(), 2u);
  EXPECT_EQ(s.by_turn[1].calls, 3 + 2 + 3) << "every successful call of step 1 counts";
}

TEST(SessionTallyTest, RecordsKeepSessionTurnAndTurnsThroughJsonlOnlyWhenSet) {
  const RequestRecord r = Call(7, 2, 5, 10, 20);
  const nlohmann::json j = RecordToJson(r, 0);
  EXPECT_EQ(j["session"], 7);
  EXPECT_EQ(j["turn"], 2);
  EXPECT_EQ(j["turns"], 5);
  auto back = RecordFromJson(j);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->session, 7);
  EXPECT_EQ(back->turn, 2);
  EXPECT_EQ(back->turns, 5);
  EXPECT_FALSE(RecordToJson(Call(-1, 0, 1, 0, 1), 0).contains("session"));
  nlohmann::json bad = j;
  bad["turn"] = 5;
  EXPECT_FALSE(RecordFromJson(bad).ok());
  EXPECT_FALSE(j.contains("branch")) << "one call per step: no parallel fields";
  EXPECT_EQ(back->calls, 5) << "absent: calls = turns";

  // Parallel calls: branch, branches and calls round-trip; the writer's bytes are the tree's.
  const RequestRecord p = Branch(7, 2, 5, 1, 3, 11, 10, 20);
  const nlohmann::json pj = RecordToJson(p, 0);
  EXPECT_EQ(pj["branch"], 1);
  EXPECT_EQ(pj["branches"], 3);
  EXPECT_EQ(pj["calls"], 11);
  std::string line;
  AppendRecordJson(line, p, 0);
  EXPECT_EQ(line, pj.dump());
  auto pb = RecordFromJson(pj);
  ASSERT_TRUE(pb.ok()) << pb.status().ToString();
  EXPECT_EQ(pb->branch, 1);
  EXPECT_EQ(pb->branches, 3);
  EXPECT_EQ(pb->calls, 11);
  for (const auto& [key, value] : {std::pair<const char*, int>{"branch", 3}, {"branches", 0}, {"calls", 4}}) {
    nlohmann::json b = pj;
    b[key] = value;
    EXPECT_FALSE(RecordFromJson(b).ok()) << key << " " << value;
  }
}

}  // namespace
}  // namespace infereng::metrics
