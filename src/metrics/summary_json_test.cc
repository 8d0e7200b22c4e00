#include "metrics/summary_json.h"

#include <cstdio>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "metrics/test_records.h"
#include "metrics/trials.h"

namespace infereng::metrics {
namespace {

using testdata::Rec;

Summary Sample(AccumulatorOptions::Mode mode) {
  AccumulatorOptions o;
  o.mode = mode;
  o.source = mode == AccumulatorOptions::Mode::kExact ? "measured" : "simulated";
  o.slo.latency = {{.metric = "ttft_ms", .percentile = 99, .threshold_ms = 150},
                   {.metric = "itl_ms", .percentile = 95, .threshold_ms = 20}};
  o.slo.min_output_tokens_per_s = 1;
  std::vector<RequestRecord> recs = {
      Rec(1, 0, 0, {{100, 1, true}, {110}, {140, 3}}, 141),
      Rec(2, 500, 501, {{560}, {575}}, 575),
      Rec(3, 1000, 1000, {}, 1200, ErrorClass::kHttp4xx),
  };
  return Summarize(recs, o);
}

TEST(SummaryJson, RequiredKeysArePresent) {
  nlohmann::json j = SummaryToJson(Sample(AccumulatorOptions::Mode::kExact));
  for (const char* key : {"ttft_ms", "ttft_incl_queue_ms", "e2e_ms", "e2e_incl_queue_ms", "tpot_ms",
                          "itl_ms", "inter_chunk_ms", "itl_p99_per_request_ms", "schedule_lag_ms",
                          "queue_ms"}) {
    ASSERT_TRUE(j.contains(key)) << key;
    for (const char* f : {"p50", "p90", "p95", "p99", "p99_9", "mean", "min", "max", "count"}) {
      EXPECT_TRUE(j[key].contains(f)) << key << "." << f;
    }
  }
  for (const char* key : {"output_tokens_per_s", "requests_per_s", "goodput_rps", "slo_attainment",
                          "offered_rps", "window", "errors", "slo", "counts", "partial"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_EQ(j["schema"], "infereng.summary/1");
  EXPECT_TRUE(j["window"].contains("start_s"));
  EXPECT_TRUE(j["window"].contains("end_s"));
  EXPECT_EQ(j["errors"]["http_4xx"], 1);
  EXPECT_EQ(j["slo"]["targets"].size(), 2u);
  EXPECT_TRUE(j["slo"]["targets"][0].contains("value_ms"));
  EXPECT_TRUE(j["slo"]["targets"][0].contains("pass"));
  // An empty distribution is count 0 with nulls, never a fake 0 ms.
  EXPECT_EQ(j["queue_ms"]["count"], 0);
  EXPECT_TRUE(j["queue_ms"]["p99"].is_null());
}

TEST(SummaryJson, RoundTripBothModes) {
  for (auto mode : {AccumulatorOptions::Mode::kExact, AccumulatorOptions::Mode::kHistogram}) {
    Summary s = Sample(mode);
    s.partial = true;
    nlohmann::json j = SummaryToJson(s);
    auto back = SummaryFromJson(j);
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(SummaryToJson(*back), j);
    EXPECT_EQ(back->ttft_ms, s.ttft_ms);
    EXPECT_EQ(back->counts, s.counts);
    EXPECT_EQ(back->slo, s.slo);
    EXPECT_EQ(back->goodput_thresholds, s.goodput_thresholds);
    EXPECT_EQ(back->timeseries, s.timeseries);
    EXPECT_TRUE(back->partial);
    EXPECT_EQ(back->histograms.size(), s.histograms.size());
    for (const auto& [key, h] : s.histograms) EXPECT_TRUE(back->histograms.at(key).SameBuckets(h)) << key;
  }
}

// The per-request thresholds and each objective's sample count are written (additive keys),
// and summaries from before them still read: `samples` then comes from the distribution.
TEST(SummaryJson, GoodputThresholdsAndSampleCounts) {
  Summary s = Sample(AccumulatorOptions::Mode::kExact);
  nlohmann::json j = SummaryToJson(s);
  ASSERT_EQ(j["slo"]["goodput_thresholds"].size(), 2u);
  EXPECT_EQ(j["slo"]["goodput_thresholds"][0]["origin"], "ttft p99");
  EXPECT_EQ(j["slo"]["goodput_thresholds"][1]["percentile"], 95);
  EXPECT_EQ(j["slo"]["goodput_thresholds_text"],
            "ttft <= 150 ms, itl <= 20 ms (own p95 ITL) (default: the card's highest-percentile objectives: ttft p99, "
            "itl p95)");
  EXPECT_EQ(j["slo"]["targets"][0]["samples"], 2);
  for (auto& t : j["slo"]["targets"]) t.erase("samples");
  j["slo"].erase("goodput_thresholds");
  auto old = SummaryFromJson(j);
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  EXPECT_EQ(old->slo[0].samples, 2);                // ttft_incl_queue_ms count
  EXPECT_EQ(old->slo[1].samples, s.itl_ms.count);  // itl_ms count
  EXPECT_TRUE(old->goodput_thresholds.empty());
}

TEST(SummaryJson, FileRoundTripAndErrorsNameTheKey) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("infereng_summary_" + std::to_string(::getpid()) + ".json")).string();
  Summary s = Sample(AccumulatorOptions::Mode::kExact);
  ASSERT_TRUE(WriteSummaryFile(path, s).ok());
  auto back = ReadSummaryFile(path);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->e2e_ms, s.e2e_ms);

  nlohmann::json j = SummaryToJson(s);
  j["ttft_ms"]["p99"] = "slow";
  auto bad = SummaryFromJson(j);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("summary.ttft_ms.p99: expected a number"), std::string::npos)
      << bad.status().message();

  j = SummaryToJson(s);
  j["schema"] = "other/9";
  EXPECT_FALSE(SummaryFromJson(j).ok());
  j = SummaryToJson(s);
  j.erase("window");
  EXPECT_NE(SummaryFromJson(j).status().message().find("summary.window"), std::string::npos);

  std::ofstream(path, std::ios::trunc) << "{oops";
  auto broken = ReadSummaryFile(path);
  ASSERT_FALSE(broken.ok());
  EXPECT_NE(broken.status().message().find(path), std::string::npos);
  std::remove(path.c_str());
}

TEST(SummaryJson, HistogramJsonRejectsBadBuckets) {
  LogHistogram h;
  h.Add(3);
  nlohmann::json j = HistogramToJson(h);
  j["buckets"][0][0] = 1u << 30;
  EXPECT_FALSE(HistogramFromJson(j, "h").ok());
  j = HistogramToJson(h);
  j["lowest"] = 1e-300;
  j["highest"] = 1e300;
  j["sub_buckets"] = 65536;
  EXPECT_FALSE(HistogramFromJson(j, "h").ok());  // would need ~130M counters
  j = HistogramToJson(h);
  j["count"] = 7;
  EXPECT_NE(HistogramFromJson(j, "h").status().message().find("h.count"), std::string::npos);
}

TEST(Trials, MeanAndConfidenceIntervalPerPercentile) {
  // Three trials whose TTFT p99 are 10, 12, 14 ms: mean 12, half width 4.3027 * 2 / sqrt(3).
  std::vector<Summary> trials(3);
  for (int i = 0; i < 3; ++i) {
    trials[static_cast<size_t>(i)].ttft_ms = stats::Summarize({1.0, 10.0 + 2 * i});
    trials[static_cast<size_t>(i)].output_tokens_per_s = 100 + i;
  }
  trials[2].tpot_ms = stats::Summarize({5.0});  // only one trial has TPOT
  TrialStats t = AggregateTrials(trials);
  EXPECT_EQ(t.trials, 3);
  const stats::MeanCi& p = t.distributions.at("ttft_ms").at("max");
  EXPECT_DOUBLE_EQ(p.mean, 12);
  EXPECT_NEAR(p.half_width, 4.96833, 1e-4);
  EXPECT_EQ(t.distributions.at("tpot_ms").at("p50").n, 1);
  EXPECT_FALSE(t.distributions.at("tpot_ms").at("p50").defined);
  EXPECT_EQ(t.distributions.count("queue_ms"), 0u);
  EXPECT_DOUBLE_EQ(t.scalars.at("output_tokens_per_s").mean, 101);
  nlohmann::json j = TrialStatsToJson(t);
  EXPECT_DOUBLE_EQ(j["distributions"]["ttft_ms"]["max"]["mean"].get<double>(), 12);
  EXPECT_EQ(j["trials"], 3);
}

TEST(Trials, MergeRunHistogramsIsTheUnion) {
  auto run = [](std::vector<RequestRecord> recs) {
    AccumulatorOptions o;
    o.mode = AccumulatorOptions::Mode::kHistogram;
    return Summarize(recs, o);
  };
  Summary a = run({Rec(1, 0, 0, {{40}}, 40), Rec(2, 10, 10, {{90}}, 90)});
  Summary b = run({Rec(3, 0, 0, {{200}}, 200)});
  Summary both = run({Rec(1, 0, 0, {{40}}, 40), Rec(2, 10, 10, {{90}}, 90), Rec(3, 0, 0, {{200}}, 200)});
  auto m = MergeRunHistograms({a, b}, "ttft_ms");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_TRUE(m->SameBuckets(both.histograms.at("ttft_ms")));
  EXPECT_EQ(m->count(), 3u);
  EXPECT_DOUBLE_EQ(m->max(), 200);
  Summary exact = Summarize({Rec(1, 0, 0, {{40}}, 40)}, {});
  auto bad = MergeRunHistograms({a, exact}, "ttft_ms");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("run 1"), std::string::npos);
}

}  // namespace
}  // namespace infereng::metrics
