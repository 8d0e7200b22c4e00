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

TEST(SummaryTable, AliasesCoverEveryTool) {
  EXPECT_EQ(ToolAliases().size(), 5u);
  const std::string a = ToolAliasesText();
  for (const char* tool : {"vLLM", "SGLang", "AIPerf", "GuideLLM", "LLMPerf", "E2EL", "ICL"}) {
    EXPECT_NE(a.find(tool), std::string::npos) << tool;
  }
}

}  // namespace
}  // namespace infereng::metrics
