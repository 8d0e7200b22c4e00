#include "job/history.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <algorithm>
#include <map>

#include <gtest/gtest.h>

#include "job/history_views.h"
#include "job/manifest.h"
#include "metrics/summary.h"
#include "metrics/summary_json.h"
#include "metrics/test_records.h"

namespace infereng::job {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

EnvLookup Env(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

TEST(HistoryPathTest, FlagThenVariableThenXdgThenHome) {
  const EnvLookup all = Env({{"INFERENG_HISTORY", "/v/h.db"}, {"XDG_DATA_HOME", "/xdg"}, {"HOME", "/home/u"}});
  EXPECT_EQ(*ResolveHistoryPath({.path = "/flag.db"}, all), "/flag.db");
  EXPECT_EQ(*ResolveHistoryPath({}, all), "/v/h.db");
  EXPECT_EQ(*ResolveHistoryPath({}, Env({{"XDG_DATA_HOME", "/xdg"}, {"HOME", "/home/u"}})), "/xdg/infereng/history.db");
  EXPECT_EQ(*ResolveHistoryPath({}, Env({{"HOME", "/home/u"}})), "/home/u/.local/share/infereng/history.db");
  // Off: the flag or the variable.
  EXPECT_EQ(*ResolveHistoryPath({.path = "/flag.db", .disabled = true}, all), "");
  EXPECT_EQ(*ResolveHistoryPath({}, Env({{"INFERENG_HISTORY", "off"}, {"HOME", "/home/u"}})), "");
  EXPECT_FALSE(ResolveHistoryPath({}, Env({})).ok());
}

// The test binaries point the history into the build tree (src/testing/history_env.cc): a
// test that runs a command never writes into the user's home.
TEST(HistoryPathTest, TestsNeverUseTheRealHome) {
  const char* v = std::getenv("INFERENG_HISTORY");
  ASSERT_NE(v, nullptr);
  EXPECT_NE(std::string(v).find("/test-history/"), std::string::npos) << v;
  auto p = ResolveHistoryPath({});
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(*p, v);
}

metrics::Summary SampleSummary(double ttft_ms) {
  using metrics::testdata::C;
  using metrics::testdata::Rec;
  metrics::AccumulatorOptions ao;
  ao.slo.latency.push_back({.metric = "ttft_ms", .percentile = 99, .threshold_ms = 500});
  metrics::SummaryAccumulator acc(ao);
  for (int i = 0; i < 10; ++i) {
    const double t = i * 100.0;
    acc.Add(Rec(static_cast<uint64_t>(i), t, t, {C{t + ttft_ms}, C{t + ttft_ms + 10}}, t + ttft_ms + 20));
  }
  return acc.Finish();
}

json Manifest() {
  return {{"card", {{"name", "chat"}, {"path", "chat.yaml"}, {"sha256", "abc123"}}},
          {"seed", 42},
          {"target", "http://127.0.0.1:8000"},
          {"model", {{"id", "m"}, {"revision", nullptr}}},
          {"engine", {{"name", "vllm"}, {"version", "0.9"}}},
          {"tool", {{"version", "0.1.0"}, {"git_commit", "deadbeef"}}},
          {"host", "box"},
          {"start_time_utc", "2026-12-01T10:00:00Z"},
          {"load", {{"mode", "open_loop"}}}};
}

TEST(HistoryEntryTest, RunEntryCarriesManifestFactsMetricsAndVerdicts) {
  auto e = EntryFromRun("bench", Manifest(), metrics::SummaryToJson(SampleSummary(100)), "");
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->card_name, "chat");
  EXPECT_EQ(e->card_sha256, "abc123");
  EXPECT_EQ(e->engine_version, "0.9");
  EXPECT_EQ(e->git_commit, "deadbeef");
  EXPECT_EQ(e->seed, 42);
  EXPECT_EQ(e->model_revision, "");
  ASSERT_NE(e->Metric("ttft_ms.p99"), nullptr);
  EXPECT_NEAR(e->Metric("ttft_ms.p99")->value, 100, 1e-9);
  ASSERT_TRUE(e->slo_pass.has_value());
  EXPECT_TRUE(*e->slo_pass);
  ASSERT_FALSE(e->slos.empty());
  EXPECT_NE(e->slos[0].objective.find("ttft"), std::string::npos);
  auto failing = EntryFromRun("bench", Manifest(), metrics::SummaryToJson(SampleSummary(900)), "");
  EXPECT_FALSE(*failing->slo_pass);
}

// Embeddings and session runs keep their own headline numbers (`history trend` names them
// as summary.json does); a plain run has none of them.
TEST(HistoryEntryTest, EmbeddingsAndSessionRunsKeepTheirUnits) {
  metrics::Summary s = SampleSummary(100);
  metrics::EmbeddingsSummary emb;
  emb.items_per_s = 512;
  emb.input_tokens_per_s = 65536;
  s.embeddings = emb;
  metrics::SessionSummary ss;
  ss.started = ss.succeeded = 4;
  ss.per_s = 2;
  ss.goodput_per_s = 1.5;
  ss.success_rate = 1;
  ss.latency_ms = stats::Summarize({100, 200, 300, 400});
  ss.prefix_hit_rate = 0.75;
  s.sessions = ss;
  auto e = EntryFromRun("bench", Manifest(), metrics::SummaryToJson(s), "");
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  const std::pair<const char*, double> want[] = {{"embeddings.items_per_s", 512},
                                                 {"embeddings.input_tokens_per_s", 65536},
                                                 {"sessions.per_s", 2},
                                                 {"sessions.goodput_per_s", 1.5},
                                                 {"sessions.success_rate", 1},
                                                 {"sessions.latency_ms.p50", 250},
                                                 {"sessions.latency_ms.p99", ss.latency_ms.p99},
                                                 {"sessions.prefix_hit_rate", 0.75}};
  for (const auto& [name, value] : want) {
    ASSERT_NE(e->Metric(name), nullptr) << name;
    EXPECT_DOUBLE_EQ(e->Metric(name)->value, value) << name;
  }
  auto plain = EntryFromRun("bench", Manifest(), metrics::SummaryToJson(SampleSummary(100)), "");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->Metric("embeddings.items_per_s"), nullptr);
  EXPECT_EQ(plain->Metric("sessions.per_s"), nullptr);
}

// A rerank run's block is summary.json's "rerank": its names follow.
TEST(HistoryEntryTest, RerankRunsKeepDocumentsPerSecondUnderTheirKey) {
  metrics::Summary s = SampleSummary(100);
  metrics::EmbeddingsSummary rr;
  rr.rerank = true;
  rr.items_per_s = 300;
  rr.input_tokens_per_s = 66000;
  s.embeddings = rr;
  auto e = EntryFromRun("bench", Manifest(), metrics::SummaryToJson(s), "");
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  ASSERT_NE(e->Metric("rerank.items_per_s"), nullptr);
  EXPECT_DOUBLE_EQ(e->Metric("rerank.items_per_s")->value, 300);
  EXPECT_DOUBLE_EQ(e->Metric("rerank.input_tokens_per_s")->value, 66000);
  EXPECT_EQ(e->Metric("embeddings.items_per_s"), nullptr);
}

TEST(HistoryEntryTest, TrialsCiIsKept) {
  json s = metrics::SummaryToJson(SampleSummary(100));
  s["trials"] = {{"distributions", {{"ttft_ms", {{"p99", {{"mean", 100}, {"ci_low", 90}, {"ci_high", 110}}}}}}}};
  auto e = EntryFromRun("bench", Manifest(), s, "");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->Metric("ttft_ms.p99")->ci_low, 90);
  EXPECT_EQ(e->Metric("ttft_ms.p99")->ci_high, 110);
}

TEST(HistoryEntryTest, ImportOfARunDirectoryIsIdempotent) {
  const fs::path dir = fs::temp_directory_path() / ("infereng-history-import-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "run");
  ASSERT_TRUE(WriteJsonFile((dir / "run" / "manifest.json").string(), Manifest()).ok());
  ASSERT_TRUE(WriteJsonFile((dir / "run" / "summary.json").string(), metrics::SummaryToJson(SampleSummary(120))).ok());
  const std::string db = (dir / "h.db").string();
  auto e = EntryFromRunDir((dir / "run").string());
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->kind, "bench");
  EXPECT_TRUE(fs::path(e->dir).is_absolute());
  auto first = RegisterEntry(db, *e);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_FALSE(first->existing);
  auto again = RegisterEntry(db, *EntryFromRunDir((dir / "run").string()));
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->existing);
  EXPECT_EQ(again->id, first->id);
  // Not a run directory: said so.
  auto bad = EntryFromRunDir(dir.string());
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("not a run directory"), std::string::npos);
  fs::remove_all(dir);
}

// canary and probe register like the other commands: their directories become entries
// (kind, target, verdict as pass), and `history list` reads them back.
TEST(HistoryEntryTest, CanaryAndProbeDirectoriesRegisterAndList) {
  const fs::path dir = fs::temp_directory_path() / ("infereng-history-canary-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  // A canary directory (canary.json with relative run folders, and the candidate's run).
  fs::create_directories(dir / "canary" / "candidate");
  ASSERT_TRUE(WriteJsonFile((dir / "canary" / "candidate" / "manifest.json").string(), Manifest()).ok());
  ASSERT_TRUE(WriteJsonFile((dir / "canary" / "candidate" / "summary.json").string(),
                            metrics::SummaryToJson(SampleSummary(120)))
                  .ok());
  const json canary = {{"schema", "infereng.canary/1"}, {"go", false}, {"verdict", "no-go"}, {"interrupted", false},
                       {"gradual", false}, {"baseline", "http://127.0.0.1:8000"}, {"candidate", "http://127.0.0.1:8001"},
                       {"steps", {{{"dir", "somewhere/else"}, {"candidate_dir", "somewhere/else/candidate"},
                                   {"go", false}, {"reasons", {{{"criterion", "ttft_ms.paired"}, {"text", "+4 ms"}}}}}}}};
  ASSERT_TRUE(WriteJsonFile((dir / "canary" / "canary.json").string(), canary).ok());
  auto c = EntryFromRunDir((dir / "canary").string());
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->kind, "canary");
  EXPECT_EQ(c->target, "http://127.0.0.1:8001");
  EXPECT_EQ(c->card_name, "chat") << "what ran comes from the candidate's run";
  ASSERT_TRUE(c->slo_pass.has_value());
  EXPECT_FALSE(*c->slo_pass) << "no-go";
  ASSERT_NE(c->Metric("ttft_ms.p99"), nullptr);
  EXPECT_NEAR(c->Metric("ttft_ms.p99")->value, 120, 1e-9);
  EXPECT_EQ(json::parse(c->manifest)["canary"]["reasons"][0]["criterion"], "ttft_ms.paired");

  // A probe directory.
  fs::create_directories(dir / "probe");
  const json probe = {{"target", "http://127.0.0.1:8002"}, {"complete", true}, {"error", nullptr},
                      {"probes", {{{"name", "overload"}, {"verdict", "fail"}}, {{"name", "limits"}, {"verdict", "pass"}},
                                  {{"name", "cold-start"}, {"verdict", "n/a"}}}}};
  ASSERT_TRUE(WriteJsonFile((dir / "probe" / "probe.json").string(), probe).ok());
  auto p = EntryFromRunDir((dir / "probe").string());
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->kind, "probe");
  EXPECT_EQ(p->target, "http://127.0.0.1:8002");
  EXPECT_FALSE(*p->slo_pass) << "a probe failed";
  EXPECT_FALSE(p->partial);
  ASSERT_EQ(p->slos.size(), 3u);
  EXPECT_EQ(p->slos[0].objective, "probe overload: fail");
  EXPECT_FALSE(p->slos[0].pass);
  EXPECT_TRUE(p->slos[2].pass) << "n/a is not a failure";
  EXPECT_EQ(p->Metric("probes_failed")->value, 1);

  const std::string db = (dir / "h.db").string();
  ASSERT_TRUE(RegisterEntry(db, *c).ok());
  ASSERT_TRUE(RegisterEntry(db, *p).ok());
  auto opened = store::HistoryDb::Open(db);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  auto listed = (*opened)->List(store::ListFilter{});
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  std::vector<std::string> kinds;
  for (const store::RunEntry& e : *listed) kinds.push_back(e.kind);
  std::sort(kinds.begin(), kinds.end());
  EXPECT_EQ(kinds, (std::vector<std::string>{"canary", "probe"}));
  fs::remove_all(dir);
}

TEST(HistoryBaselineTest, ByIdOrLatestPassing) {
  const fs::path dir = fs::temp_directory_path() / ("infereng-history-baseline-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  auto db = store::HistoryDb::Open((dir / "h.db").string());
  ASSERT_TRUE(db.ok());
  auto pass = (*db)->Insert(*EntryFromRun("bench", Manifest(), metrics::SummaryToJson(SampleSummary(100)), ""));
  ASSERT_TRUE((*db)->Insert(*EntryFromRun("bench", Manifest(), metrics::SummaryToJson(SampleSummary(900)), "")).ok());
  EXPECT_EQ(FindBaseline(**db, "latest-passing", {.card = "chat"})->id, *pass);
  EXPECT_EQ(FindBaseline(**db, std::to_string(*pass), {})->id, *pass);
  EXPECT_EQ(FindBaseline(**db, "#" + std::to_string(*pass), {})->id, *pass);
  EXPECT_EQ(FindBaseline(**db, "999", {}).status().code(), Status::Code::kNotFound);
  EXPECT_EQ(FindBaseline(**db, "latest", {}).status().code(), Status::Code::kInvalidArgument);
  fs::remove_all(dir);
}

TEST(HistorySinceTest, DatesTimesAndAges) {
  EXPECT_EQ(*ParseSince("2026-12-01", "2026-12-05T00:00:00Z"), "2026-12-01");
  EXPECT_EQ(*ParseSince("2026-12-01T10:00:00Z", "2026-12-05T00:00:00Z"), "2026-12-01T10:00:00Z");
  EXPECT_EQ(*ParseSince("7d", "2026-12-05T06:00:00Z"), "2026-11-28T06:00:00Z");
  EXPECT_EQ(*ParseSince("12h", "2026-12-05T06:00:00Z"), "2026-12-04T18:00:00Z");
  EXPECT_FALSE(ParseSince("last week", "2026-12-05T06:00:00Z").ok());
}

TEST(HistoryViewsTest, TrendSparklineAndCsv) {
  std::vector<store::RunEntry> entries;
  for (int i = 0; i < 4; ++i) {
    store::RunEntry e;
    e.id = i + 1;
    e.card_name = i == 2 ? "a,b" : "chat";
    e.registered_at = "2026-12-0" + std::to_string(i + 1) + "T00:00:00Z";
    e.metrics = {{"ttft_ms.p99", 100.0 + 100 * i, std::nullopt, std::nullopt}};
    if (i == 3) e.metrics[0].ci_low = 350, e.metrics[0].ci_high = 450;
    entries.push_back(e);
  }
  EXPECT_EQ(Sparkline({1, 2, 3, 8}), "\u2581\u2582\u2583\u2588");
  EXPECT_EQ(Sparkline({5, 5}), "\u2584\u2584");
  auto points = TrendOf(entries, "ttft_ms.p99");
  ASSERT_TRUE(points.ok());
  ASSERT_EQ(points->size(), 4u);
  const std::string text = FormatTrend("ttft_ms.p99", *points);
  EXPECT_NE(text.find("\u2581"), std::string::npos);
  EXPECT_NE(text.find("[350, 450]"), std::string::npos);
  const std::string html = TrendHtml("ttft_ms.p99", *points);
  EXPECT_NE(html.find("<svg"), std::string::npos);
  auto missing = TrendOf(entries, "ttft_ms.p98");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("ttft_ms.p99"), std::string::npos);
  const std::string csv = HistoryCsv(entries);
  EXPECT_NE(csv.find("\"a,b\""), std::string::npos);
  EXPECT_NE(csv.find(",ttft_ms.p99\n"), std::string::npos);
}

}  // namespace
}  // namespace infereng::job
