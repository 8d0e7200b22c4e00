// summary.json's bench-job keys: written by one function, read back by one function.
#include "job/summary_extras.h"

#include <gtest/gtest.h>

namespace infereng::job {
namespace {

SummaryExtras Full() {
  SummaryExtras e;
  e.client = {.cpu_s = 1.5,
              .cpu_s_per_1m_output_tokens = 30.0,
              .connections_opened = 8,
              .stale_connections_dropped = 1,
              .requests_retried = 2,
              .retry_time_lost_s = 0.25,
              .io_threads = 2,
              .preconnect = ClientCost::Preconnect{
                  .requested = 8, .opened = 7, .failed = 1, .seconds = 0.01, .connect_ms_max = 4.5},
              .saturation = nlohmann::json{{"client_shaped", true}, {"stamp_source", "kernel"}}};
  e.prompt_lengths = bench::LengthReport{.samples = 10, .exact = 9, .mean_abs_error = 0.5, .max_abs_error = 3,
                                         .mean_ratio = 1.01};
  e.output_length_control = "ignore_eos+min_tokens";
  e.quality = metrics::QualityReport{.checked = 4, .passed = 3, .pass_threshold = 0.5};
  e.cold_start = nlohmann::json{{"partial", false}};
  e.trials = nlohmann::json{{"n", 3}};
  e.engine_metrics_files = {{"before", "engine_metrics_before.prom"}, {"after", "engine_metrics_after.prom"}};
  e.engine_metrics = nlohmann::json{{"counters_delta", nlohmann::json::object()}};
  e.notes = {"a note"};
  return e;
}

TEST(SummaryExtras, WritesTheDocumentedKeys) {
  nlohmann::json sj = nlohmann::json::object();
  AddExtrasToJson(Full(), &sj);
  for (const char* key : {"client", "prompt_lengths", "output_length_control", "quality", "cold_start", "trials",
                          "engine_metrics_files", "engine_metrics", "notes"}) {
    EXPECT_TRUE(sj.contains(key)) << key;
  }
  EXPECT_EQ(sj["client"]["cpu_s_per_1m_output_tokens"], 30.0);
  EXPECT_EQ(sj["client"]["preconnect"]["opened"], 7);
  EXPECT_EQ(sj["client"]["io_threads"], 2);
  EXPECT_EQ(sj["client"]["saturation"]["client_shaped"], true);
  EXPECT_EQ(sj["prompt_lengths"]["mean_achieved_over_target"], 1.01);
  EXPECT_EQ(sj["quality"]["pass_rate"], 0.75);
}

TEST(SummaryExtras, AbsentPartsWriteNoKeyAndNullsStayNull) {
  SummaryExtras e;
  e.output_length_control = "not controlled";
  nlohmann::json sj = nlohmann::json::object();
  AddExtrasToJson(e, &sj);
  for (const char* key : {"prompt_lengths", "quality", "cold_start", "trials", "engine_metrics_files", "engine_metrics"}) {
    EXPECT_FALSE(sj.contains(key)) << key;
  }
  EXPECT_TRUE(sj["client"]["cpu_s_per_1m_output_tokens"].is_null());  // no output tokens: null, not 0
  EXPECT_TRUE(sj["notes"].is_array());
}

TEST(SummaryExtras, RoundTripsThroughJson) {
  nlohmann::json sj = nlohmann::json::object();
  AddExtrasToJson(Full(), &sj);
  Result<SummaryExtras> back = SummaryExtrasFromJson(sj);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  nlohmann::json again = nlohmann::json::object();
  AddExtrasToJson(*back, &again);
  EXPECT_EQ(again, sj);
}

TEST(SummaryExtras, WrongTypeNamesTheKey) {
  nlohmann::json sj = {{"client", {{"cpu_s", "fast"}}}};
  Result<SummaryExtras> back = SummaryExtrasFromJson(sj);
  ASSERT_FALSE(back.ok());
  EXPECT_NE(back.status().message().find("\"client\".cpu_s"), std::string::npos) << back.status().message();
}

}  // namespace
}  // namespace infereng::job
