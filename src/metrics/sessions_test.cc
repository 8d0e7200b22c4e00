#include "metrics/sessions.h"

#include <gtest/gtest.h>

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

TEST(SessionTallyTest, HandMadeTasksLatencyIsStepsPlusToolTimeAndOutcomesAreSeparated) {
  SessionTally t;
  // Task 1: three steps of 100, 200 and 300 ms with 50 ms of tool time between them.
  t.Add(Call(1, 0, 3, 0, 100));
  t.Add(Call(1, 1, 3, 150, 350, ErrorClass::kNone, 200, 96));
  t.Add(Call(1, 2, 3, 400, 700, ErrorClass::kNone, 300, 192));
  // Task 2: its second step failed (the third never ran).
  t.Add(Call(2, 0, 3, 10, 60));
  t.Add(Call(2, 1, 3, 110, 120, ErrorClass::kHttp5xx));
  // Task 3: interrupted in flight (Ctrl-C): incomplete, not failed.
  t.Add(Call(3, 0, 3, 20, 80));
  t.Add(Call(3, 1, 3, 130, 140, ErrorClass::kInterrupted));
  // Task 4: the window ended before its last step was sent.
  t.Add(Call(4, 0, 2, 30, 90));
  // Task 5: started after the window: not counted.
  t.Add(Call(5, 0, 1, 5000, 5100));
  // A call outside any session is ignored.
  RequestRecord single = Call(-1, 0, 1, 0, 10);
  t.Add(single);

  const SessionSummary s = t.Finish(0, 1000 * kMs, /*rate_basis_s=*/2.0, /*tasks=*/true, /*task_ms=*/650.0, 0.5);
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

  const SessionSummary lax = t.Finish(0, 1000 * kMs, 2.0, true, 800.0, 0.5);
  EXPECT_EQ(lax.good, 1);
  EXPECT_TRUE(lax.task_slo_pass);  // 1 of 2 ended tasks within 800 ms >= 50%
}

TEST(SessionTallyTest, AFailedFinalAnswerCheckFailsTheTask) {
  SessionTally t;
  t.Add(Call(1, 0, 2, 0, 100));
  RequestRecord last = Call(1, 1, 2, 150, 250);
  last.quality_pass = 0;
  t.Add(last);
  const SessionSummary s = t.Finish(0, 1000 * kMs, 1.0, false, std::nullopt, 0.99);
  EXPECT_EQ(s.failed, 1);
  EXPECT_EQ(s.succeeded, 0);
  EXPECT_TRUE(s.task_slo_pass);  // no slo.task
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
}

}  // namespace
}  // namespace infereng::metrics
