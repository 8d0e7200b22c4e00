// compare end to end on run directories: two twin runs differing in one engine knob (the
// knob alone reported, a delta whose interval excludes 0), two seeds of the same config (no
// detectable difference), quality that drops on a faster run, acceptance, sweeps, bad input.
#include "job/compare.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "card/card_parser.h"
#include "catalog/catalog.h"
#include "job/compare_report.h"
#include "metrics/summary_json.h"
#include "report/test_run_dir.h"
#include "testing/paths.h"
#include "testing/sim_run_dir.h"
#include "twin/setup.h"
#include "twin/simulation.h"

namespace infereng::job {
namespace {

namespace fs = std::filesystem;
using report::testing::FreshDir;
using report::testing::MakeRecords;
using report::testing::SyntheticRun;
using report::testing::WriteRunDir;

// A simulated run directory as `sweep --simulate` writes a point (requests.jsonl,
// summary.json, manifest.json with the card's path and hash, the --set knobs and the seed).
void SimulateRunDir(const std::string& dir, const std::vector<std::string>& sets, uint64_t seed) {
  Status st = infereng::testing::SimulateRunDir(dir, sets, seed);
  ASSERT_TRUE(st.ok()) << st.ToString();
}

TEST(CompareTest, OneKnobOnTheTwinIsReportedAloneWithAnIntervalExcludingZero) {
  const std::string dir = FreshDir("compare-knob");
  SimulateRunDir(dir + "/a", {}, 42);
  SimulateRunDir(dir + "/b", {"engine.max_num_seqs=8"}, 42);  // far fewer concurrent sequences: queueing
  CompareOptions o;
  o.bootstrap.resamples = 300;  // plenty for a 95% interval here; keeps the test cheap
  auto c = CompareDirs(dir + "/a", dir + "/b", o);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->manifest.kind, ExperimentKind::kOneVariable);
  EXPECT_EQ(c->manifest.variables, std::vector<std::string>{"engine knob max_num_seqs"});
  const MetricDelta* ttft = c->Find("ttft_ms.p50");
  ASSERT_NE(ttft, nullptr);
  EXPECT_TRUE(ttft->ci.defined);
  EXPECT_GT(ttft->ci.low, 0) << FormatComparisonText(*c);  // B queues: TTFT up, interval above 0
  EXPECT_EQ(ttft->verdict, DeltaVerdict::kWorse);
  EXPECT_GT(ttft->ci.n_a, 100);
  fs::remove_all(dir);
}

TEST(CompareTest, TwoSeedsOfTheSameConfigShowNoDetectableDifference) {
  const std::string dir = FreshDir("compare-seeds");
  SimulateRunDir(dir + "/a", {}, 1);
  SimulateRunDir(dir + "/b", {}, 2);
  CompareOptions o;
  o.bootstrap.resamples = 300;
  auto c = CompareDirs(dir + "/a", dir + "/b", o);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->manifest.kind, ExperimentKind::kReplicate);
  // Request-level statistics only. Token-level ones (ITL, TPOT) are correlated within a run
  // (a request's gaps share its batches), and between two seeds the bootstrap, which cannot
  // see between-run variance from one pair, still calls some of them different: a known
  // limit, said in docs/compare.md ("Replicates").
  for (const char* key : {"ttft_ms.p50", "ttft_ms.p90", "ttft_ms.p99", "e2e_ms.p50", "e2e_ms.p90", "requests_per_s",
                          "goodput_rps", "error_rate"}) {
    const MetricDelta* d = c->Find(key);
    ASSERT_NE(d, nullptr) << key;
    EXPECT_EQ(d->verdict, DeltaVerdict::kNoDifference) << key << "\n" << FormatComparisonText(*c);
  }
  fs::remove_all(dir);
}

TEST(CompareTest, AcceptanceAndQualityDecideTheExitAndAFasterRunWithWorseQualityIsNotAWin) {
  const std::string dir = FreshDir("compare-quality");
  auto a = MakeRecords({.requests = 400, .interval_ms = 20, .ttft_ms = 120});
  auto b = MakeRecords({.requests = 400, .interval_ms = 20, .ttft_ms = 80});  // faster
  for (std::size_t i = 0; i < a.size(); ++i) {
    a[i].quality_pass = 1;
    b[i].quality_pass = i % 3 == 0 ? 0 : 1;  // a third fail
  }
  WriteRunDir(dir + "/a", a);
  WriteRunDir(dir + "/b", b);
  // The quality check as a bench job writes it beside the summary.
  for (const auto& [side, passed] : {std::pair{"a", 400}, std::pair{"b", 266}}) {
    const std::string p = dir + "/" + side + "/summary.json";
    std::ifstream in(p);
    nlohmann::json j = nlohmann::json::parse(in);
    j["quality"] = {{"checked", 400}, {"passed", passed}, {"pass_rate", passed / 400.0}, {"pass_threshold", 0}};
    std::ofstream(p) << j.dump(2);
  }
  CompareOptions o;
  auto exprs = ParseAcceptExprs({"ttft_ms.p50<=-10%", "ttft_ms.p50<=-50%"});
  ASSERT_TRUE(exprs.ok());
  o.accept = *exprs;
  auto c = CompareDirs(dir + "/a", dir + "/b", o);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const MetricDelta* ttft = c->Find("ttft_ms.p50");
  ASSERT_NE(ttft, nullptr);
  EXPECT_EQ(ttft->verdict, DeltaVerdict::kBetter);
  ASSERT_GE(c->acceptance.size(), 3u);
  EXPECT_TRUE(c->acceptance[0].pass) << c->acceptance[0].detail;       // -10%: yes (about -30%)
  EXPECT_TRUE(c->acceptance[0].confident);
  EXPECT_FALSE(c->acceptance[1].pass) << c->acceptance[1].detail;      // -50%: no
  const MetricDelta* q = c->Find("quality_pass_rate");
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->verdict, DeltaVerdict::kWorse);
  ASSERT_FALSE(c->findings.empty());
  EXPECT_EQ(c->findings[0].kind, FindingKind::kQualityNotAWin);
  EXPECT_EQ(c->acceptance.back().source, "quality");
  EXPECT_FALSE(c->acceptance.back().pass);
  EXPECT_FALSE(c->accepted);

  // Only the passing expression and no quality drop: accepted.
  const std::string p = dir + "/b/summary.json";
  std::ifstream in(p);
  nlohmann::json j = nlohmann::json::parse(in);
  j["quality"]["passed"] = 400;
  j["quality"]["pass_rate"] = 1.0;
  std::ofstream(p) << j.dump(2);
  o.accept.pop_back();
  auto ok = CompareDirs(dir + "/a", dir + "/b", o);
  ASSERT_TRUE(ok.ok());
  EXPECT_TRUE(ok->accepted) << FormatComparisonText(*ok);
  // A gate on a figure the runs do not have fails, never passes silently.
  o.accept = *ParseAcceptExprs({"goodput_rps>=0"});
  fs::remove(dir + "/a/requests.jsonl");
  auto summary_only = CompareDirs(dir + "/a", dir + "/b", o);
  ASSERT_TRUE(summary_only.ok()) << summary_only.status().ToString();
  const MetricDelta* t2 = summary_only->Find("ttft_ms.p50");
  EXPECT_EQ(t2->verdict, DeltaVerdict::kUnknown);
  EXPECT_FALSE(t2->ci.defined);
  fs::remove_all(dir);
}

TEST(CompareTest, CardSlosAreJudgedOnB) {
  const std::string dir = FreshDir("compare-card");
  WriteRunDir(dir + "/a", MakeRecords({.requests = 200, .ttft_ms = 100}));
  WriteRunDir(dir + "/b", MakeRecords({.requests = 200, .ttft_ms = 400}));
  auto card = card::ParseCard(R"(name: c
traffic:
  arrival: {process: poisson, rate: 5rps}
  input_tokens: 100
  output_tokens: 20
slo:
  ttft: {p99: 300ms}
)", "c.yaml");
  ASSERT_TRUE(card.ok()) << card.status().ToString();
  CompareOptions o;
  o.card = &*card;
  auto c = CompareDirs(dir + "/a", dir + "/b", o);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_EQ(c->acceptance.size(), 1u);
  EXPECT_EQ(c->acceptance[0].source, "card SLO");
  EXPECT_FALSE(c->acceptance[0].pass) << c->acceptance[0].detail;
  EXPECT_FALSE(c->accepted);
  fs::remove_all(dir);
}

TEST(CompareTest, BadInputIsAClearError) {
  const std::string dir = FreshDir("compare-bad");
  WriteRunDir(dir + "/a", MakeRecords({.requests = 50}));
  WriteRunDir(dir + "/b", MakeRecords({.requests = 50}));
  auto missing = CompareDirs(dir + "/a", dir + "/nope", {});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("nope"), std::string::npos);
  // A malformed line is named with its file and line, never skipped silently.
  std::ofstream(dir + "/b/requests.jsonl", std::ios::app) << "{not json\n";
  auto bad = CompareDirs(dir + "/a", dir + "/b", {});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("requests.jsonl:51"), std::string::npos) << bad.status().message();
  // A run and a sweep.
  auto f = report::testing::MakeSweep(dir + "/s", {1, 2, 4}, false);
  fs::create_directories(dir + "/s");
  ASSERT_TRUE(sweep::WriteSweepJson(dir + "/s/sweep.json", f).ok());
  auto mixed = CompareDirs(dir + "/a", dir + "/s", {});
  ASSERT_FALSE(mixed.ok());
  EXPECT_EQ(mixed.status().code(), Status::Code::kInvalidArgument);
  fs::remove_all(dir);
}

TEST(CompareTest, SweepsCompareMaxGoodputAndKnee) {
  const std::string dir = FreshDir("compare-sweeps");
  auto fa = report::testing::MakeSweep(dir + "/a", {2, 4, 6, 8, 12}, false);
  auto fb = report::testing::MakeSweep(dir + "/b", {2, 4, 8, 12, 16}, false);
  fs::create_directories(dir + "/a");
  fs::create_directories(dir + "/b");
  ASSERT_TRUE(sweep::WriteSweepJson(dir + "/a/sweep.json", fa).ok());
  ASSERT_TRUE(sweep::WriteSweepJson(dir + "/b/sweep.json", fb).ok());
  auto c = CompareDirs(dir + "/a", dir + "/b", {});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE(c->sweeps);
  ASSERT_FALSE(c->sweep.empty());
  EXPECT_EQ(c->sweep[0].what, "max goodput load");
  ASSERT_TRUE(c->sweep[0].a && c->sweep[0].b);
  EXPECT_EQ(*c->sweep[0].a, 6);  // the highest load with attainment >= target (loads <= 6 pass)
  EXPECT_EQ(*c->sweep[0].b, 4);
  const std::string text = FormatComparisonText(*c);
  EXPECT_NE(text.find("max goodput load"), std::string::npos);
  EXPECT_NE(ComparisonToJson(*c)["sweep"][0]["delta"], nullptr);
  fs::remove_all(dir);
}

TEST(CompareTest, OutputsEscapeRunData) {
  const std::string dir = FreshDir("compare-escape");
  WriteRunDir(dir + "/a", MakeRecords({.requests = 60}), {{"card", {{"name", "x"}}}, {"target", "<script>a</script>"}});
  WriteRunDir(dir + "/b", MakeRecords({.requests = 60}), {{"card", {{"name", "x"}}}, {"target", "<script>b</script>"}});
  auto c = CompareDirs(dir + "/a", dir + "/b", {});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const std::string html = ComparisonHtml(*c);
  EXPECT_EQ(html.find("<script>"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;"), std::string::npos);
  const std::string md = ComparisonMarkdown(*c);
  EXPECT_EQ(md.find("<script>"), std::string::npos);
  const nlohmann::json j = ComparisonToJson(*c);
  EXPECT_EQ(j["schema"], "infereng.compare/1");
  EXPECT_EQ(j["experiment"]["variables"][0], "target");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace infereng::job
