#include "metrics/summary_table.h"

#include <gtest/gtest.h>

#include "metrics/test_records.h"

namespace infereng::metrics {
namespace {

using testdata::Rec;

TEST(SummaryTable, ShowsRowsRatesSlosErrorsAndBoundaries) {
  AccumulatorOptions o;
  o.slo.latency = {{.metric = "ttft_ms", .percentile = 99, .threshold_ms = 50}};
  std::vector<RequestRecord> recs = {Rec(1, 0, 0, {{100}, {110}}, 110),
                                     Rec(2, 1000, 1000, {}, 1100, ErrorClass::kTimeout)};
  recs[0].t_send = MillisToNanos(2);  // 2 ms schedule lag: flagged
  Summary s = Summarize(recs, o);
  const std::string t = FormatSummaryTable(s, {.show_timeseries = true});
  EXPECT_NE(t.find("TTFT incl. queue"), std::string::npos) << t;
  EXPECT_NE(t.find("SLO ttft_ms p99 <= 50.00 ms (on ttft_incl_queue_ms): 100.0 ms FAIL"), std::string::npos) << t;
  EXPECT_NE(t.find("errors: timeout 1"), std::string::npos) << t;
  EXPECT_NE(t.find("WARNING: schedule lag"), std::string::npos) << t;
  EXPECT_NE(t.find("Metric boundaries"), std::string::npos);
  // Empty distributions (no server-side queue times here) are not printed.
  const std::string table_only = FormatSummaryTable(s, {.show_boundaries = false});
  EXPECT_NE(table_only.find("TPOT"), std::string::npos);
  EXPECT_EQ(table_only.find("Server queue"), std::string::npos);
  EXPECT_EQ(FormatSummaryTable(s, {.show_boundaries = false}).find("Metric boundaries"), std::string::npos);
}

// The TTFT split line appears only when the engine reported phases; an engine without a
// queue time is named; malformed `timings` are a warning with their count.
TEST(SummaryTable, TtftSplitLineWhenPhasesWereReported) {
  RequestRecord r = Rec(1, 0, 0, {{100}, {110}}, 110);
  const std::string without = FormatSummaryTable(Summarize({r}, {}), {.show_boundaries = false});
  EXPECT_EQ(without.find("TTFT split"), std::string::npos) << without;
  EXPECT_EQ(without.find("timings"), std::string::npos) << without;

  r.server_prefill = MillisToNanos(40);  // llama.cpp: prefill only
  RequestRecord bad = Rec(2, 0, 0, {{100}}, 100);
  bad.server_timings_malformed = true;
  const std::string t = FormatSummaryTable(Summarize({r, bad}, {}), {.show_boundaries = false});
  EXPECT_NE(t.find("TTFT split P50 / P99 ms: client+network 60.00 / 60.00 | queue n/a | prefill 40.00 / 40.00"),
            std::string::npos) << t;
  EXPECT_NE(t.find("1 of them without a queue time"), std::string::npos) << t;
  EXPECT_NE(t.find("WARNING: 1 responses carried a malformed `timings`"), std::string::npos) << t;
}

TEST(SummaryTable, AliasesCoverEveryTool) {
  EXPECT_EQ(ToolAliases().size(), 5u);
  const std::string a = ToolAliasesText();
  for (const char* tool : {"vLLM", "SGLang", "AIPerf", "GuideLLM", "LLMPerf", "E2EL", "ICL"}) {
    EXPECT_NE(a.find(tool), std::string::npos) << tool;
  }
}

}  // namespace
}  // namespace infereng::metrics
