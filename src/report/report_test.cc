#include "report/report.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <cctype>

#include "report/run_data.h"
#include "report/run_sections.h"
#include "report/test_run_dir.h"
#include "sweep/search.h"
#include "sweep/sweep_io.h"

namespace infereng::report {
namespace {

using namespace infereng::report::testing;
namespace fs = std::filesystem;

// The first tag carrying an attribute that loads or runs something, or "".
std::string TagWithLoadingAttribute(const std::string& html) {
  static const char* const kAttrs[] = {"src=", "onerror=", "onload=", "onclick="};
  for (std::size_t open = html.find('<'); open != std::string::npos; open = html.find('<', open + 1)) {
    const std::size_t close = html.find('>', open);
    const std::string tag = html.substr(open, close == std::string::npos ? std::string::npos : close - open);
    for (const char* attr : kAttrs) {
      const std::size_t at = tag.find(attr);
      if (at != std::string::npos && at > 0 && std::isspace(static_cast<unsigned char>(tag[at - 1]))) return tag;
    }
  }
  return "";
}

// No scripts, no external resources: nothing is fetched when the file is opened.
void ExpectSelfContained(const std::string& html) {
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_EQ(html.find("<img"), std::string::npos);
  EXPECT_EQ(html.find("<iframe"), std::string::npos);
  EXPECT_EQ(html.find("@import"), std::string::npos);
  EXPECT_EQ(html.find("url(http"), std::string::npos);
  // Attributes that load or run something, inside a tag (escaped text has no '<').
  // (A scan, not std::regex: libstdc++'s recursive matcher overflows the stack on a
  // megabyte of HTML under ASan.)
  EXPECT_EQ(TagWithLoadingAttribute(html), "");
  EXPECT_EQ(html.find("javascript:"), std::string::npos);
  // The only absolute URL allowed is the SVG namespace name (an identifier, never fetched).
  std::string stripped = html;
  const std::string ns = "xmlns=\"http://www.w3.org/2000/svg\"";
  for (std::size_t at = stripped.find(ns); at != std::string::npos; at = stripped.find(ns, at)) stripped.erase(at, ns.size());
  EXPECT_EQ(stripped.find("http://"), std::string::npos);
  EXPECT_EQ(stripped.find("https://"), std::string::npos);
  EXPECT_EQ(Count(html, "<svg"), Count(html, "</svg>"));
  EXPECT_NE(html.find("Content-Security-Policy"), std::string::npos);
}

TEST(ReportTest, SingleRunHasEveryChartAndFile) {
  std::string dir = FreshDir("single");
  WriteRunDir(dir, MakeRecords({.requests = 150, .error_every = 25}));
  auto files = WriteReport(dir);
  ASSERT_TRUE(files.ok()) << files.status().ToString();
  EXPECT_FALSE(files->sweep);
  std::string html = ReadFile(dir + "/report.html");
  ExpectSelfContained(html);
  // 3 CDFs + TTFT/ITL over time + in-flight + rates + waterfall + TTFT split + errors.
  EXPECT_EQ(files->charts, 10);
  EXPECT_EQ(Count(html, "<svg"), 10);
  for (const char* s : {"TTFT distribution (CDF)", "Inter-token latency distribution", "End-to-end latency distribution",
                        "TTFT over time", "In flight and queued over time", "Request waterfall", "Errors by class",
                        "SLO ttft p99 ≤ 300 ms", "server queue", "prefill", "test-card", "Metric definitions",
                        "vLLM bench", "HTTP 503: overloaded"}) {
    EXPECT_NE(html.find(s), std::string::npos) << s;
  }
  std::string md = ReadFile(dir + "/report.md");
  EXPECT_NE(md.find("# infereng report — test-card"), std::string::npos);
  EXPECT_NE(md.find("TTFT"), std::string::npos);
  std::string csv = ReadFile(dir + "/requests.csv");
  EXPECT_EQ(Count(csv, "\n"), 151);  // header + one per record
  EXPECT_NE(csv.find("http_5xx"), std::string::npos);
  EXPECT_TRUE(fs::exists(dir + "/timeseries.csv"));
  fs::remove_all(dir);
}

TEST(ReportTest, ErrorsOnlyRunEscapesUserData) {
  std::string dir = FreshDir("errors");
  const std::string evil = "<script>alert('x')</script><img src=x onerror=alert(1)>";
  WriteRunDir(dir, MakeRecords({.requests = 30, .all_errors = true, .error_message = evil}),
              {{"card", {{"name", evil}}}, {"api_key", "sk-very-secret"}, {"headers", {{"Authorization", "Bearer sk-2"}}}});
  auto files = WriteReport(dir);
  ASSERT_TRUE(files.ok()) << files.status().ToString();
  std::string html = ReadFile(dir + "/report.html");
  ExpectSelfContained(html);
  EXPECT_NE(html.find("&lt;script&gt;"), std::string::npos);
  EXPECT_EQ(html.find("<img"), std::string::npos);
  EXPECT_EQ(html.find("sk-very-secret"), std::string::npos);
  EXPECT_EQ(html.find("sk-2"), std::string::npos);
  EXPECT_NE(html.find("Errors by class"), std::string::npos);
  EXPECT_NE(html.find("no data"), std::string::npos);  // no successful request to plot
  std::string md = ReadFile(dir + "/report.md");
  EXPECT_EQ(md.find("<script>"), std::string::npos);
  EXPECT_EQ(ReadFile(dir + "/requests.csv").find("sk-very-secret"), std::string::npos);
  fs::remove_all(dir);
}

// Issue 19: the report had no quality section. Now: the pass rate with its interval and
// threshold, the pass rate over time and by check kind, and the failing cases — a model's
// answer is user data, so an answer holding markup renders as text.
TEST(ReportTest, QualitySectionShowsRateChartsAndEscapedFailingCases) {
  std::string dir = FreshDir("quality");
  WriteRunDir(dir, MakeRecords({.requests = 40}));
  std::vector<metrics::QualityOutcome> outs;
  for (uint64_t i = 0; i < 20; ++i) {
    metrics::QualityOutcome o{.request_id = i, .item = static_cast<int>(i), .check = i % 2 ? "number" : "exact",
                              .pass = i % 4 != 0, .t_sched = MillisToNanos(600 + 50 * static_cast<double>(i)),
                              .t_done = MillisToNanos(700 + 50 * static_cast<double>(i))};
    if (!o.pass) {
      o.prompt = "What is 2+2?";
      o.expected = "4";
      o.got = metrics::QualityExcerpt("<script>alert('pwned')</script><img src=x onerror=alert(1)> & 5");
      o.why = "last number differs from the expected number";
    }
    outs.push_back(std::move(o));
  }
  const metrics::QualityReport q =
      metrics::BuildQualityReport(outs, {.t0 = 0, .start = MillisToNanos(500), .bucket_s = 0.25}, 0.9);
  nlohmann::json sj = nlohmann::json::parse(ReadFile(dir + "/summary.json"));
  sj["quality"] = metrics::QualityReportToJson(q);
  std::ofstream(dir + "/summary.json") << sj.dump();
  auto files = WriteReport(dir);
  ASSERT_TRUE(files.ok()) << files.status().ToString();
  const std::string html = ReadFile(dir + "/report.html");
  ExpectSelfContained(html);  // no <script>, no <img>: the answer is text
  EXPECT_NE(html.find("&lt;script&gt;alert(&#39;pwned&#39;)&lt;/script&gt;"), std::string::npos);
  EXPECT_NE(html.find("&amp; 5"), std::string::npos);
  for (const char* s : {"Quality pass rate over time", "Pass rate by check kind", "quality pass rate", "75.0%",
                        "15 of 20", "threshold 90.0%", "Failing cases: the first 5 of 5", "What is 2+2?",
                        "is below the threshold 90.0%"}) {
    EXPECT_NE(html.find(s), std::string::npos) << s;
  }
  EXPECT_EQ(files->charts, 9 + 2);
  EXPECT_NE(ReadFile(dir + "/report.md").find("| quality pass rate | 75.0% (15 of 20, 95% CI [53.1%, 88.8%]), threshold 90.0% → **FAIL** |"),
            std::string::npos);  // the run's charts (TTFT split, no errors chart) + the two quality charts
  fs::remove_all(dir);
}

TEST(ReportTest, EmbeddingsRunHasItsSectionAndMarkdownRows) {
  std::string dir = FreshDir("embeddings");
  WriteRunDir(dir, MakeRecords({.requests = 20}));
  metrics::EmbeddingsSummary e;
  e.requests = 20;
  e.items = 160;
  e.input_tokens = 20480;
  e.window_items = 150;
  e.window_input_tokens = 19200;
  e.items_per_s = 75;
  e.input_tokens_per_s = 9600;
  e.items_per_request = stats::Summarize({8, 8, 8, 16});
  e.input_tokens_per_item = stats::Summarize({128, 128});
  nlohmann::json sj = nlohmann::json::parse(ReadFile(dir + "/summary.json"));
  sj["embeddings"] = metrics::EmbeddingsToJson(e);
  std::ofstream(dir + "/summary.json") << sj.dump();
  auto files = WriteReport(dir);
  ASSERT_TRUE(files.ok()) << files.status().ToString();
  const std::string html = ReadFile(dir + "/report.html");
  ExpectSelfContained(html);
  for (const char* s : {">Embeddings<", "items/s", "150 items in the window", "19200 input tokens in the window",
                        "items (batch size)", "input tokens per item"}) {
    EXPECT_NE(html.find(s), std::string::npos) << s;
  }
  const std::string md = ReadFile(dir + "/report.md");
  EXPECT_NE(md.find("| embeddings requests · items · input tokens | 20 · 160 · 20480 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| batch size P50 / max | 8 / 16 |"), std::string::npos) << md;

  std::string plain = FreshDir("no_embeddings");
  WriteRunDir(plain, MakeRecords({.requests = 5}));
  ASSERT_TRUE(WriteReport(plain).ok());
  EXPECT_EQ(ReadFile(plain + "/report.html").find(">Embeddings<"), std::string::npos);
  fs::remove_all(dir);
  fs::remove_all(plain);
}

TEST(ReportTest, RerankRunHasItsSectionInDocuments) {
  std::string dir = FreshDir("rerank");
  WriteRunDir(dir, MakeRecords({.requests = 10}));
  metrics::EmbeddingsSummary e;
  e.rerank = true;
  e.requests = 10;
  e.items = 200;
  e.input_tokens = 44000;
  e.window_items = 180;
  e.window_input_tokens = 39600;
  e.items_per_s = 90;
  e.input_tokens_per_s = 19800;
  e.items_per_request = stats::Summarize({20, 20});
  e.input_tokens_per_item = stats::Summarize({220, 220});
  nlohmann::json sj = nlohmann::json::parse(ReadFile(dir + "/summary.json"));
  sj["rerank"] = metrics::EmbeddingsToJson(e);
  std::ofstream(dir + "/summary.json") << sj.dump();
  auto files = WriteReport(dir);
  ASSERT_TRUE(files.ok()) << files.status().ToString();
  const std::string html = ReadFile(dir + "/report.html");
  for (const char* s : {">Rerank<", "documents/s", "180 documents in the window", "39600 pair tokens in the window",
                        "pair tokens per document"}) {
    EXPECT_NE(html.find(s), std::string::npos) << s;
  }
  EXPECT_EQ(html.find(">Embeddings<"), std::string::npos);
  const std::string md = ReadFile(dir + "/report.md");
  EXPECT_NE(md.find("| rerank requests · documents · pair tokens | 10 · 200 · 44000 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| documents per request P50 / max | 20 / 20 |"), std::string::npos) << md;
  fs::remove_all(dir);
}

TEST(ReportTest, EmptyRunDoesNotCrash) {
  std::string dir = FreshDir("empty");
  WriteRunDir(dir, {});
  auto files = WriteReport(dir);
  ASSERT_TRUE(files.ok()) << files.status().ToString();
  std::string html = ReadFile(dir + "/report.html");
  ExpectSelfContained(html);
  EXPECT_NE(html.find("no data"), std::string::npos);
  EXPECT_NE(html.find("no requests"), std::string::npos);
  fs::remove_all(dir);
}

// No data prints "n/a" and why (never "0.00 ms FAIL"); a P99 over too few samples says so;
// both notions of SLO are printed apart, with the per-request thresholds goodput used.
TEST(ReportTest, NaWithReasonsFewSamplesAndGoodputThresholds) {
  std::string dir = FreshDir("na");
  WriteRunDir(dir, MakeRecords({.requests = 30, .all_errors = true}));
  ASSERT_TRUE(WriteReport(dir).ok());
  std::string html = ReadFile(dir + "/report.html"), md = ReadFile(dir + "/report.md");
  for (const std::string& text : {html, md}) {
    EXPECT_NE(text.find("no request in the window succeeded"), std::string::npos);
    const bool thresholds = text.find("ttft &lt;= 300 ms, itl &lt;= 50 ms (own p99 ITL)") != std::string::npos ||
                            text.find("ttft <= 300 ms, itl <= 50 ms (own p99 ITL)") != std::string::npos;
    EXPECT_TRUE(thresholds);
  }
  EXPECT_EQ(md.find("| 0 ms | FAIL"), std::string::npos);
  fs::remove_all(dir);

  dir = FreshDir("few");
  WriteRunDir(dir, MakeRecords({.requests = 40}));
  ASSERT_TRUE(WriteReport(dir).ok());
  html = ReadFile(dir + "/report.html");
  md = ReadFile(dir + "/report.md");
  EXPECT_NE(html.find(" samples"), std::string::npos);
  EXPECT_NE(html.find("P99 from "), std::string::npos);
  EXPECT_NE(md.find("P99 from "), std::string::npos);
  EXPECT_NE(html.find("Objectives, each judged on the run&#39;s percentile"), std::string::npos);
  fs::remove_all(dir);
}

TEST(ReportTest, MissingAndBrokenFilesBecomeNotices) {
  std::string dir = FreshDir("broken");
  std::ofstream(dir + "/manifest.json") << "{not json";
  std::ofstream(dir + "/requests.jsonl") << "{\"id\": 1, \"t_sched_ms\": \"soon\"}\n";
  auto files = WriteReport(dir);
  ASSERT_TRUE(files.ok()) << files.status().ToString();
  std::string html = ReadFile(dir + "/report.html");
  EXPECT_NE(html.find("summary.json: missing"), std::string::npos);
  EXPECT_NE(html.find("manifest.json: not valid JSON"), std::string::npos);
  EXPECT_NE(html.find("skipped 1 malformed line in " + dir + "/requests.jsonl (line 1: t_sched_ms"), std::string::npos)
      << "bad line named with its number";
  ASSERT_EQ(files->warnings.size(), 1u);
  EXPECT_NE(files->warnings[0].find("line 1: t_sched_ms"), std::string::npos) << files->warnings[0];
  fs::remove_all(dir);
}

// A bad line in the middle of requests.jsonl: the records after it are charted too, the
// report and report.md say how many lines were skipped, and the caller gets a warning.
TEST(ReportTest, MalformedLinesAreSkippedCountedAndReported) {
  std::string dir = FreshDir("malformed");
  WriteRunDir(dir, MakeRecords({.requests = 30}));
  {
    std::string text = ReadFile(dir + "/requests.jsonl");
    std::size_t at = 0;
    for (int i = 0; i < 10; ++i) at = text.find('\n', at) + 1;  // after line 10
    text.insert(at, "{\"id\": 1, \"t_sched_ms\": \"soon\"}\n");
    at = text.find('\n', text.find('\n', at) + 1) + 1;  // after line 12
    text.insert(at, "garbage\n");
    std::ofstream(dir + "/requests.jsonl", std::ios::trunc) << text;
  }
  auto run = LoadRunDir(dir);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_EQ(run->rows.size(), 30u) << "the records after the bad lines are kept";
  EXPECT_EQ(run->skipped.count, 2);
  auto files = WriteReport(dir);
  ASSERT_TRUE(files.ok()) << files.status().ToString();
  ASSERT_EQ(files->warnings.size(), 1u);
  const std::string want = "skipped 2 malformed lines in " + dir +
                           "/requests.jsonl (line 11: t_sched_ms: expected a number of ms or null; line 13: not valid JSON)";
  EXPECT_EQ(files->warnings[0], want);
  EXPECT_NE(ReadFile(dir + "/report.html").find("skipped 2 malformed lines"), std::string::npos);
  EXPECT_NE(ReadFile(dir + "/report.md").find("skipped 2 malformed lines"), std::string::npos);
  fs::remove_all(dir);
}

TEST(ReportTest, NotARunDirectoryIsAnError) {
  std::string dir = FreshDir("nothing");
  auto files = WriteReport(dir);
  ASSERT_FALSE(files.ok());
  EXPECT_EQ(files.status().code(), Status::Code::kNotFound);
  EXPECT_FALSE(WriteReport(dir + "/does-not-exist").ok());
  fs::remove_all(dir);
}

TEST(ReportTest, PredictedRunIsOverlaid) {
  std::string dir = FreshDir("predicted");
  WriteRunDir(dir, MakeRecords({.server_breakdown = false}));
  WriteRunDir(dir + "/predicted", MakeRecords({.ttft_ms = 60}), {{"card", {{"name", "test-card"}}}}, "simulated");
  ASSERT_TRUE(WriteReport(dir).ok());
  std::string html = ReadFile(dir + "/report.html");
  EXPECT_NE(html.find("predicted (twin)"), std::string::npos);
  EXPECT_NE(html.find("send→first token"), std::string::npos);  // measured: no server breakdown
  // The twin's run has its split, the measured one none: one split chart, the prediction's
  // is not drawn (only the run's own rows are).
  EXPECT_EQ(html.find("TTFT split per request"), std::string::npos);
  fs::remove_all(dir);
}

// A measured run whose engine reported `timings`: the TTFT split is drawn stacked (queue,
// prefill, client+network) with the phase boundaries printed, and summarised in the table.
TEST(ReportTest, ReportedPhasesGiveTheTtftSplitChart) {
  std::string dir = FreshDir("split");
  WriteRunDir(dir, MakeRecords({.requests = 60, .server_breakdown = false, .reported_phases = true}));
  ASSERT_TRUE(WriteReport(dir).ok());
  std::string html = ReadFile(dir + "/report.html");
  for (const char* s : {"TTFT split per request (sorted by TTFT)", "arrival at the engine → first scheduled",
                        "first scheduled → first token", "client+network", "TTFT split P50 / P99 ms: client+network 2.00 / 2.00"}) {
    EXPECT_NE(html.find(s), std::string::npos) << s;
  }
  std::string md = ReadFile(dir + "/report.md");
  EXPECT_NE(md.find("| TTFT split: server queue / prefill / client+network P50 / P99 |"), std::string::npos) << md;
  fs::remove_all(dir);
}

TEST(ReportTest, SweepReportMarksKneeAndMaxGoodput) {
  std::string dir = FreshDir("sweep");
  sweep::SweepFile f = MakeSweep(dir, {2, 4, 6, 8, 16}, true);
  f.predicted = MakeSweep(dir, {2, 4, 8, 16}, false).result.points;
  ASSERT_TRUE(sweep::WriteSweepJson(dir + "/sweep.json", f).ok());
  auto files = WriteReport(dir);
  ASSERT_TRUE(files.ok()) << files.status().ToString();
  EXPECT_TRUE(files->sweep);
  std::string html = ReadFile(dir + "/report.html");
  ExpectSelfContained(html);
  for (const char* s : {"TTFT vs throughput", "ITL vs throughput", "E2E latency vs throughput",
                        "Throughput and goodput vs offered load", "SLO attainment vs offered load", "knee (saturation) @ 8",
                        "max goodput @ 6", "P99 predicted (twin)", "ttft p99 &lt;= 300 ms", "sweep-card",
                        "points/02-6/report.html"}) {
    EXPECT_NE(html.find(s), std::string::npos) << s;
  }
  // 5 sweep charts + the detail of the max-goodput point (9 run charts with the TTFT split, no errors).
  EXPECT_EQ(files->charts, 5 + 9);
  EXPECT_TRUE(fs::exists(dir + "/points/02-6/report.html"));
  EXPECT_TRUE(fs::exists(dir + "/sweep.csv"));
  EXPECT_NE(ReadFile(dir + "/report.md").find("Max goodput under SLO"), std::string::npos);
  fs::remove_all(dir);
}

// The latency-vs-throughput curve is drawn at the SLO's own percentile (an E2E P95 SLO used
// to sit over P50/P99 curves it does not constrain).
TEST(ReportTest, SweepLatencyCurvesUseTheSloPercentile) {
  std::string dir = FreshDir("sweep_p95");
  sweep::SweepFile f = MakeSweep(dir, {2, 4, 8}, false);
  f.result.slos.push_back({"e2e_ms", 95, 2000});
  for (sweep::SweepPoint& p : f.result.points) p.e2e_ms = {.p50 = 100, .p90 = 150, .p95 = 180, .p99 = 250, .count = 10};
  ASSERT_TRUE(sweep::WriteSweepJson(dir + "/sweep.json", f).ok());
  ASSERT_TRUE(WriteReport(dir).ok());
  const std::string html = ReadFile(dir + "/report.html");
  const std::size_t e2e = html.find("<title>E2E latency vs throughput</title>");
  ASSERT_NE(e2e, std::string::npos);
  const std::string chart = html.substr(e2e, html.find("</svg>", e2e) - e2e);
  EXPECT_NE(chart.find(">P95<"), std::string::npos) << chart;
  EXPECT_NE(chart.find("180 ms"), std::string::npos) << "the P95 values are plotted";
  EXPECT_EQ(chart.find(">P99<"), std::string::npos);
  fs::remove_all(dir);
}

// With a sped-up embedded engine the sweep report reads in engine time only: the point's
// wall-time detail stays in its own report, which says it is in wall time.
TEST(ReportTest, SpedUpSweepKeepsOneTimeBasePerReport) {
  std::string dir = FreshDir("sweep_speedup");
  sweep::SweepFile f = MakeSweep(dir, {2, 4, 6, 8, 16}, true);
  f.result.speedup = 4;
  ASSERT_TRUE(sweep::WriteSweepJson(dir + "/sweep.json", f).ok());
  for (const sweep::SweepPoint& p : f.result.points) {
    nlohmann::json m = nlohmann::json::parse(ReadFile(dir + "/" + p.dir + "/manifest.json"));
    m["embedded_server"] = {{"speedup", 4}};
    std::ofstream(dir + "/" + p.dir + "/manifest.json") << m.dump();
  }
  auto files = WriteReport(dir);
  ASSERT_TRUE(files.ok()) << files.status().ToString();
  EXPECT_EQ(files->charts, 5) << "no wall-time detail charts in the engine-time report";
  const std::string html = ReadFile(dir + "/report.html");
  EXPECT_NE(html.find("Time base: engine time"), std::string::npos);
  EXPECT_NE(html.find("points/02-6/report.html"), std::string::npos);
  EXPECT_NE(ReadFile(dir + "/points/02-6/report.html").find("Time base: wall clock"), std::string::npos);
  fs::remove_all(dir);
}

TEST(ReportTest, SweepWithOnePointAndNoDirs) {
  std::string dir = FreshDir("sweep1");
  ASSERT_TRUE(sweep::WriteSweepJson(dir + "/sweep.json", MakeSweep(dir, {3}, false)).ok());
  auto files = WriteReport(dir);
  ASSERT_TRUE(files.ok()) << files.status().ToString();
  ExpectSelfContained(ReadFile(dir + "/report.html"));
  EXPECT_EQ(files->charts, 5);

  sweep::SweepFile none;
  ASSERT_TRUE(sweep::WriteSweepJson(dir + "/sweep.json", none).ok());
  ASSERT_TRUE(WriteReport(dir).ok());
  EXPECT_NE(ReadFile(dir + "/report.html").find("This sweep has no points"), std::string::npos);
  fs::remove_all(dir);
}

TEST(ReportTest, BadSweepJsonNamesTheField) {
  std::string dir = FreshDir("badsweep");
  std::ofstream(dir + "/sweep.json") << R"({"schema": "infereng.sweep/1", "points": [{"load": "fast"}]})";
  auto files = WriteReport(dir);
  ASSERT_FALSE(files.ok());
  EXPECT_NE(files.status().message().find("sweep.points[0].load"), std::string::npos) << files.status().ToString();
  fs::remove_all(dir);
}

// A sweep.json is input: a point dir leading out of the sweep folder is refused before the
// report writes into it (issue 10: paths built from input go through core/path_names.h).
TEST(ReportTest, SweepPointDirOutsideTheSweepIsRefused) {
  std::string dir = FreshDir("escape");
  std::ofstream(dir + "/sweep.json")
      << R"({"schema": "infereng.sweep/1", "points": [{"load": 1, "dir": "../../outside"}]})";
  auto files = WriteReport(dir);
  ASSERT_FALSE(files.ok());
  EXPECT_NE(files.status().message().find("sweep.points[0].dir"), std::string::npos) << files.status().ToString();
  EXPECT_NE(files.status().message().find("\"..\""), std::string::npos) << files.status().ToString();
  fs::remove_all(dir);
}

TEST(ReportTest, SweepJsonRoundTrips) {
  std::string dir = FreshDir("roundtrip");
  sweep::SweepFile f = MakeSweep(dir, {1, 2, 4, 8, 16}, false);
  ASSERT_TRUE(sweep::WriteSweepJson(dir + "/sweep.json", f).ok());
  auto back = sweep::ReadSweepJson(dir + "/sweep.json");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_EQ(back->result.points.size(), 5u);
  EXPECT_EQ(back->result.knee, f.result.knee);
  EXPECT_EQ(back->result.max_goodput, f.result.max_goodput);
  EXPECT_EQ(back->result.binding_slo, f.result.binding_slo);
  EXPECT_EQ(back->result.slos.size(), 2u);
  EXPECT_DOUBLE_EQ(back->result.points[3].ttft_ms.p99, f.result.points[3].ttft_ms.p99);
  EXPECT_EQ(back->result.points[3].slo_met_share, f.result.points[3].slo_met_share);
  fs::remove_all(dir);
}

TEST(ReportTest, TrialsShowMeanAndConfidenceInterval) {
  std::string dir = FreshDir("trials");
  WriteRunDir(dir, MakeRecords({.requests = 40}));
  nlohmann::json summary = nlohmann::json::parse(ReadFile(dir + "/summary.json"));
  auto ci = [](double mean, double lo, double hi, bool clamped) {
    return nlohmann::json{{"mean", mean}, {"ci_low", lo}, {"ci_high", hi}, {"defined", true}, {"clamped", clamped}, {"n", 3}};
  };
  summary["trials"] = {
      {"trials", 3},
      {"distributions", {{"ttft_ms", {{"p99", ci(120, 110, 130, false)}}}}},
      {"scalars", {{"goodput_rps", ci(3.5, 0, 11.2, true)}, {"slo_attainment", {{"mean", 0.9}, {"defined", false}}}}},
      {"verdict",
       {{"rule", "the run passes only when every trial passes"},
        {"pass", false},
        {"failed_trials", {2}},
        {"per_trial", {{{"trial", 1}, {"pass", true}, {"slo_attainment", 1.0}, {"goodput_rps", 5.0}},
                       {{"trial", 2}, {"pass", false}, {"slo_attainment", 0.5}, {"goodput_rps", 0.5}},
                       {{"trial", 3}, {"pass", true}, {"slo_attainment", 1.0}, {"goodput_rps", 5.0}}}}}}};
  std::ofstream(dir + "/summary.json") << summary.dump();
  ASSERT_TRUE(WriteReport(dir).ok());
  std::string html = ReadFile(dir + "/report.html");
  EXPECT_NE(html.find("Across 3 trials"), std::string::npos);
  EXPECT_NE(html.find("120 [110, 130]"), std::string::npos);
  EXPECT_NE(html.find("3.5 [0, 11.2]*"), std::string::npos) << "an interval cut to the range is marked";
  EXPECT_NE(html.find("0.9 [CI n/a]"), std::string::npos);
  // The verdict is over every trial (trial 2 failed), not trial 1's.
  EXPECT_NE(html.find("Verdict over 3 trials: FAIL (the run passes only when every trial passes); failed: trial 2"),
            std::string::npos);
  EXPECT_NE(html.find("verdict over 3 trials"), std::string::npos);
  fs::remove_all(dir);
}

TEST(ReportTest, ManifestFlatteningRedactsSecrets) {
  nlohmann::json m = {{"target", "http://127.0.0.1:8000"}, {"api_key_source", "env:OPENAI_API_KEY"},
                      {"auth", {{"api_key", "sk-1"}, {"password", "p"}}}, {"list", {1, 2}},
                      {"rate_scale", 0.4381412531622871}, {"ratios", {0.1, 1.0 / 3}}};
  auto rows = FlattenManifest(m);
  std::string all;
  for (auto& [k, v] : rows) all += k + "=" + v + "\n";
  EXPECT_NE(all.find("api_key_source=env:OPENAI_API_KEY"), std::string::npos);
  EXPECT_NE(all.find("auth.api_key=[redacted]"), std::string::npos);
  EXPECT_EQ(all.find("sk-1"), std::string::npos);
  EXPECT_NE(all.find("list=1, 2"), std::string::npos);
  // Fractions are formatted (they used to print as 0.4381412531622871).
  EXPECT_NE(all.find("rate_scale=0.438141\n"), std::string::npos) << all;
  EXPECT_NE(all.find("ratios=0.1, 0.333333\n"), std::string::npos) << all;
}

}  // namespace
}  // namespace infereng::report
