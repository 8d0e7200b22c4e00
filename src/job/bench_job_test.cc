// End-to-end tests of bench/run against the embedded server on 127.0.0.1 (speedup keeps
// each one well under a couple of seconds): outputs, error classes, interruption, quality.
#include "job/bench_job.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "card/card_parser.h"
#include "client/test_fixture.h"
#include "client/test_server.h"
#include "metrics/records_io.h"
#include "serve/paced_engine.h"
#include "serve/server.h"

namespace infereng::job {
namespace {

using namespace infereng::bench;  // the bench job's options and results (bench/bench_options.h)

namespace fs = std::filesystem;

std::string TempDir(const std::string& name) {
  fs::path p = fs::temp_directory_path() / ("infereng_bench_test_" + std::to_string(getpid()) + "_" + name);
  fs::remove_all(p);
  fs::create_directories(p);
  return p.string();
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int64_t Lines(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  int64_t n = 0;
  while (std::getline(in, line)) n += !line.empty();
  return n;
}

card::WorkloadCard TinyCard(const std::string& extra = "") {
  const std::string yaml = std::string(R"(name: tiny
traffic:
  arrival: {process: poisson, rate: 200rps}
  input_tokens: 32
  output_tokens: 8
slo:
  ttft: {p99: 5s}
model:
  id: tiny-model
bench:
  duration: 1s
  warmup: 0s
  seed: 7
)") + extra;
  Result<card::WorkloadCard> c = card::ParseCard(yaml, "tiny.yaml");
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? *c : card::WorkloadCard{};
}

struct TestServer {
  explicit TestServer(const std::string& faults = "", serve::PacedEngineOptions po = {}, int64_t max_waiting = 1024) {
    serve::ServerOptions so;
    so.port = 0;
    so.speedup = 20;
    so.model_name = "tiny-model";
    so.max_waiting = max_waiting;
    if (!faults.empty()) {
      auto f = serve::ParseFaultSpec(faults);
      EXPECT_TRUE(f.ok()) << f.status().ToString();
      so.faults = *f;
    }
    server = std::make_unique<serve::Server>(so, std::make_unique<serve::PacedEngine>(po));
    auto port = server->Start();
    EXPECT_TRUE(port.ok()) << port.status().ToString();
    url = "http://127.0.0.1:" + std::to_string(port.ok() ? *port : 1);
  }
  std::unique_ptr<serve::Server> server;
  std::string url;
};

// Waits until `path` holds at least `n` lines (records are written one per finished request)
// or `limit` passes. Tests that stop a run part-way wait on progress, not on wall time, so a
// busy machine cannot leave them with too few finished requests.
bool WaitForLines(const std::string& path, int64_t n, std::chrono::seconds limit = std::chrono::seconds(30)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    std::ifstream f(path);
    int64_t lines = 0;
    for (std::string line; std::getline(f, line);) ++lines;
    if (lines >= n) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

BenchOptions Options(const std::string& url, const std::string& out, int64_t requests) {
  BenchOptions o;
  o.target = url;
  o.card = TinyCard();
  o.out_dir = out;
  o.requests = requests;
  o.warmup = 0;
  return o;
}

// A 20 s open-loop run into `out`, interrupted (as by Ctrl-C) once `lines` requests finished.
Result<BenchResult> RunInterruptedAfter(const std::string& url, const std::string& out, int64_t lines) {
  BenchOptions o = Options(url, out, 0);
  o.requests.reset();
  o.duration = 20 * kNanosPerSecond;
  std::atomic<bool> stop{false};
  o.interrupt = &stop;
  std::thread t([&] {
    EXPECT_TRUE(WaitForLines(out + "/requests.jsonl", lines));
    stop.store(true);
  });
  Result<BenchResult> r = RunBench(o);
  t.join();
  return r;
}

TEST(BenchSessionTest, EndToEndWritesRecordsSummaryAndManifest) {
  TestServer srv;
  const std::string out = TempDir("e2e");
  BenchOptions o = Options(srv.url + "/v1", out, 30);
  Result<BenchResult> r = RunBench(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(r->partial);
  EXPECT_EQ(r->summary.counts.succeeded, 30);
  EXPECT_EQ(Lines(out + "/requests.jsonl"), 30);
  auto records = metrics::ReadRecordsFile(out + "/requests.jsonl");
  ASSERT_TRUE(records.ok()) << records.status().ToString();
  for (const auto& rec : *records) {
    EXPECT_EQ(rec.completion_tokens, 8) << rec.id;          // forced output length
    EXPECT_EQ(rec.prompt_tokens, 32) << rec.id;             // exact prompt length via /tokenize
    EXPECT_GE(rec.t_send, rec.t_sched) << rec.id;
    // The embedded engine's `timings` reach requests.jsonl, and its part fits inside TTFT.
    ASSERT_GE(rec.server_queue, 0) << rec.id;
    ASSERT_GE(rec.server_prefill, 0) << rec.id;
    EXPECT_GE(rec.server_decode, 0) << rec.id;
    ASSERT_FALSE(rec.chunks.empty());
    EXPECT_LE(rec.server_queue + rec.server_prefill, rec.chunks.front().t - rec.t_send) << rec.id;
  }
  auto manifest = nlohmann::json::parse(Slurp(out + "/manifest.json"));
  EXPECT_EQ(manifest["target"], srv.url);  // the /v1 suffix is normalised away
  EXPECT_EQ(manifest["model"]["id"], "tiny-model");
  EXPECT_EQ(manifest["engine"]["name"], "infereng");
  EXPECT_EQ(manifest["output_length_control"], "ignore_eos+min_tokens");
  EXPECT_EQ(manifest["seed"], 7);
  EXPECT_FALSE(manifest["tool"]["git_commit"].get<std::string>().empty());
  auto summary = nlohmann::json::parse(Slurp(out + "/summary.json"));
  EXPECT_EQ(summary["partial"], false);
  EXPECT_EQ(summary["prompt_lengths"]["exact"], summary["prompt_lengths"]["samples"]);
  EXPECT_EQ(summary["ttft_client_network_ms"]["count"], 30);  // the TTFT split, every request
  EXPECT_EQ(summary["counts"]["server_timings_malformed"], 0);
  EXPECT_GT(summary["client"]["cpu_s"].get<double>(), 0);
}

struct FaultCase {
  const char* faults;
  const char* error_class;
};

class BenchFaultTest : public ::testing::TestWithParam<FaultCase> {};

TEST_P(BenchFaultTest, EveryFailureCountedInItsClass) {
  TestServer srv(GetParam().faults);
  BenchOptions o = Options(srv.url, "", 6);
  o.timeout = 400 * kNanosPerMilli;
  Result<BenchResult> r = RunBench(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const metrics::Summary& s = r->summary;
  EXPECT_EQ(s.counts.records, 6);  // none lost
  EXPECT_EQ(s.counts.succeeded, 0);
  EXPECT_EQ(s.counts.failed, 6);
  ASSERT_EQ(s.errors.count(GetParam().error_class), 1u) << nlohmann::json(s.errors).dump();
  EXPECT_EQ(s.errors.at(GetParam().error_class), 6) << nlohmann::json(s.errors).dump();
  EXPECT_FALSE(s.slo_pass);
}

INSTANTIATE_TEST_SUITE_P(Faults, BenchFaultTest,
                         ::testing::Values(FaultCase{"error5xx=1", "http_5xx"},
                                           FaultCase{"stream_error=1", "stream_error"},
                                           FaultCase{"drop=1", "incomplete"},
                                           FaultCase{"stall=1:5s", "timeout"}),
                         [](const auto& param_info) {
                           std::string n = param_info.param.error_class;
                           for (char& c : n) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return n;
                         });

// A closed loop of C users gets its C connections before the measured phase; its requests
// reuse them. --no-preconnect opens them inside the run instead (and reports no warm-up).
TEST(BenchSessionTest, ClosedLoopPreconnectsItsUsersConnections) {
  TestServer srv;
  BenchOptions o = Options(srv.url, TempDir("preconnect"), 20);
  o.concurrency = 4;
  Result<BenchResult> r = RunBench(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->summary.counts.succeeded, 20);
  const nlohmann::json& client = r->summary_json["client"];
  ASSERT_TRUE(client.contains("preconnect")) << client.dump();
  EXPECT_EQ(client["preconnect"]["requested"], 4);
  EXPECT_EQ(client["preconnect"]["opened"], 4);
  EXPECT_EQ(client["preconnect"]["failed"], 0);
  EXPECT_EQ(client["connections_opened"], 4) << "the run's requests opened connections of their own";

  BenchOptions off = Options(srv.url, TempDir("no_preconnect"), 20);
  off.concurrency = 4;
  off.preconnect = false;
  Result<BenchResult> r2 = RunBench(off);
  ASSERT_TRUE(r2.ok()) << r2.status().ToString();
  EXPECT_FALSE(r2->summary_json["client"].contains("preconnect"));
  EXPECT_EQ(r2->summary_json["client"]["connections_opened"], 4);
}

// --io-threads N: the connections are sharded across N io lanes, and the summary says so.
TEST(BenchSessionTest, IoThreadsOptionSetsTheLanesTheSummaryReports) {
  TestServer srv;
  const std::string out = TempDir("io_threads");
  BenchOptions o = Options(srv.url, out, 12);
  o.concurrency = 4;
  o.io_threads = 3;
  Result<BenchResult> r = RunBench(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  // Every request recorded, none failed, all in the window (lanes complete concurrently, so
  // slots are handed out out of order: RunnerTest.ClosedLoopWindowEndsAtTheLatest...).
  EXPECT_EQ(r->summary.counts.failed, 0) << r->first_error << " " << r->summary_json["errors"].dump();
  EXPECT_EQ(r->summary.counts.in_window, 12) << r->summary_json["counts"].dump();
  auto recs = metrics::ReadRecordsFile(out + "/requests.jsonl");
  ASSERT_TRUE(recs.ok()) << recs.status().ToString();
  EXPECT_EQ(recs->size(), 12u);
  for (const metrics::RequestRecord& rec : *recs) EXPECT_TRUE(rec.ok()) << rec.id << " " << rec.error_message;
  EXPECT_EQ(r->summary_json["client"]["io_threads"], 3);

  BenchOptions zero = Options(srv.url, TempDir("io_threads0"), 4);
  zero.io_threads = 0;
  Result<BenchResult> bad = RunBench(zero);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("--io-threads 0"), std::string::npos) << bad.status().message();
}

TEST(BenchSessionTest, OverloadAnswers429AreHttp4xxAndNoneLost) {
  serve::PacedEngineOptions po;
  po.max_running = 1;
  po.itl = 200 * kNanosPerMilli;  // 10 ms at speedup 20
  TestServer srv("", po, /*max_waiting=*/1);
  BenchOptions o = Options(srv.url, TempDir("overload"), 24);
  o.concurrency = 8;  // closed loop: 8 in flight against 1 running + 1 waiting
  Result<BenchResult> r = RunBench(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const metrics::Summary& s = r->summary;
  EXPECT_EQ(s.counts.succeeded + s.counts.failed, s.counts.in_window);
  EXPECT_GT(s.errors.count("http_4xx") ? s.errors.at("http_4xx") : 0, 0) << nlohmann::json(s.errors).dump();
  EXPECT_GT(s.counts.succeeded, 0) << nlohmann::json(s.errors).dump() << " records " << s.counts.records;
}

TEST(BenchSessionTest, UnreachableTargetIsUnavailable) {
  // A port that was just free: nothing listens there.
  TestServer srv;
  const std::string url = srv.url;
  srv.server->Stop();
  Result<BenchResult> r = RunBench(Options(url, "", 3));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kUnavailable) << r.status().ToString();
}

TEST(BenchSessionTest, InterruptKeepsFinishedRequestsAndMarksPartial) {
  TestServer srv;
  const std::string out = TempDir("interrupt");
  Result<BenchResult> r = RunInterruptedAfter(srv.url, out, 15);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->partial);
  EXPECT_TRUE(r->interrupted);
  auto summary = nlohmann::json::parse(Slurp(out + "/summary.json"));
  EXPECT_EQ(summary["partial"], true);
  const int64_t lines = Lines(out + "/requests.jsonl");
  EXPECT_GT(lines, 10);
  EXPECT_EQ(lines, r->summary.counts.records);
}

// Requests in flight at the interrupt are cancelled by the client, not failed by the server:
// recorded as "interrupted", counted apart and left out of failures and attainment.
TEST(BenchSessionTest, InterruptedRequestsAreNeitherSuccessesNorFailures) {
  serve::PacedEngineOptions slow;
  slow.itl = 200 * kNanosPerMilli;  // 8 tokens: ~80 ms wall per request at speed-up 20
  TestServer srv("", slow);
  const std::string out = TempDir("interrupt_inflight");
  Result<BenchResult> r = RunInterruptedAfter(srv.url, out, 15);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const metrics::Summary& s = r->summary;
  EXPECT_GT(s.counts.interrupted, 0) << "200 req/s of ~80 ms requests: some were in flight";
  EXPECT_GT(s.counts.succeeded, 10);
  EXPECT_EQ(s.counts.failed, 0) << nlohmann::json(s.errors).dump();
  EXPECT_EQ(s.errors.count("cancelled"), 0u);
  EXPECT_EQ(s.errors.count("interrupted"), 0u);
  EXPECT_EQ(s.counts.in_window, s.counts.succeeded);
  EXPECT_DOUBLE_EQ(s.slo_attainment, 1.0) << "every finished request met the 5 s TTFT";
  auto records = metrics::ReadRecordsFile(out + "/requests.jsonl");
  ASSERT_TRUE(records.ok()) << records.status().ToString();
  int64_t interrupted = 0;
  for (const auto& rec : *records) interrupted += rec.error == metrics::ErrorClass::kInterrupted;
  EXPECT_EQ(interrupted, s.counts.interrupted);
  EXPECT_EQ(static_cast<int64_t>(records->size()), s.counts.records);
  auto summary = nlohmann::json::parse(Slurp(out + "/summary.json"));
  EXPECT_EQ(summary["counts"]["interrupted"], s.counts.interrupted);
}

TEST(BenchSessionTest, TargetDyingMidRunEndsPartialWithConnectErrors) {
  TestServer srv;
  BenchOptions o = Options(srv.url, TempDir("dies"), 0);
  o.requests.reset();
  o.duration = 5 * kNanosPerSecond;
  o.rate_rps = 400;
  std::thread t([&] {
    EXPECT_TRUE(WaitForLines(o.out_dir + "/requests.jsonl", 5));
    srv.server->Stop();
  });
  Result<BenchResult> r = RunBench(o);
  t.join();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->partial);
  EXPECT_TRUE(r->target_down);
  const metrics::Summary& s = r->summary;
  EXPECT_GT(s.counts.succeeded, 0);
  EXPECT_GE(s.errors.count("connect") ? s.errors.at("connect") : 0, 50) << nlohmann::json(s.errors).dump();
  EXPECT_EQ(Lines(o.out_dir + "/requests.jsonl"), s.counts.records);
}

TEST(BenchSessionTest, QualityChecksGateGoodput) {
  TestServer srv;
  const std::string dir = TempDir("quality");
  {
    std::ofstream f(dir + "/evals.jsonl");
    f << R"({"prompt": "say words", "max_tokens": 4, "expect_regex": "^[a-z ]+$"})" << "\n"
      << R"({"prompt": "say zzz", "max_tokens": 4, "check": {"type": "exact", "value": "zzz"}})" << "\n";
  }
  BenchOptions o = Options(srv.url, "", 10);
  o.card.quality.eval_set = dir + "/evals.jsonl";
  o.quality_every = 1;
  Result<BenchResult> r = RunBench(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const metrics::SummaryCounts& c = r->summary.counts;
  EXPECT_EQ(c.quality_checked, 10);
  EXPECT_EQ(c.quality_passed, 5);
  EXPECT_EQ(c.good, 5);  // goodput counts only quality-passing work
  EXPECT_EQ(r->summary_json["quality"]["pass_rate"], 0.5);
}

TEST(BenchSessionTest, BadEvalSetIsUsageError) {
  TestServer srv;
  const std::string dir = TempDir("badeval");
  std::ofstream(dir + "/evals.jsonl") << "{\"prompt\": \"x\", \"check\": {\"type\": \"regex\", \"value\": \"(\"}}\n";
  BenchOptions o = Options(srv.url, "", 3);
  o.card.quality.eval_set = dir + "/evals.jsonl";
  Result<BenchResult> r = RunBench(o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(r.status().message().find("evals.jsonl:1"), std::string::npos) << r.status().message();
}

// A minimal OpenAI-compatible server: no /v1/models (404), no /tokenize, and a 400 "you
// must provide a model parameter" for a body without "model" (as in the issue).
struct ModellessServer {
  ModellessServer()
      : cap(client::testing::LoadCapture("v1_chat_stream_usage.txt")),
        server([this](const boost::beast::http::request<boost::beast::http::string_body>& req,
                      client::testing::Exchange& ex) {
          using client::testing::PlainResponse;
          auto body = nlohmann::json::parse(req.body(), nullptr, false);
          if (req.target() != "/v1/chat/completions") {
            return ex.Write(PlainResponse(404, "Not Found", "text/plain", "not found"));
          }
          ++generations;
          if (!body.is_object() || !body.contains("model")) {
            return ex.Write(PlainResponse(400, "Bad Request", "application/json",
                                          R"({"error":{"message":"you must provide a model parameter"}})"));
          }
          if (body.value("stream", false)) {
            if (body.contains("messages") && body["messages"].is_array() && !body["messages"].empty()) {
              std::lock_guard<std::mutex> lock(mu);
              prompts.push_back(body["messages"][0].value("content", ""));
            }
            std::string head = cap.head;
            const std::string te = "Transfer-Encoding: chunked\r\n";
            if (auto at = head.find(te); at != std::string::npos) {
              head.replace(at, te.size(), "Content-Length: " + std::to_string(cap.body.size()) + "\r\n");
            }
            return ex.Write(head + cap.body);
          }
          ex.Write(PlainResponse(200, "OK", "application/json", R"({"usage":{"prompt_tokens":40,"completion_tokens":1}})"));
        }) {}
  // The prompts of the streamed (measured) requests, in arrival order.
  std::vector<std::string> TakePrompts() {
    std::lock_guard<std::mutex> lock(mu);
    std::vector<std::string> out;
    out.swap(prompts);
    std::sort(out.begin(), out.end());
    return out;
  }
  client::testing::CapturedResponse cap;
  std::atomic<int> generations{0};
  std::mutex mu;
  std::vector<std::string> prompts;
  client::testing::ScriptedServer server;
};

// Issue 13 (llama.cpp's --cache-ram): two runs of one seed sent the same prompts, so the
// server's prompt cache served the second run's prefills (TTFT 15 ms for 256 tokens). Each
// run draws a fresh prompt salt (manifest prompts.salt); --prompt-salt resends a run's prompts.
TEST(BenchSessionTest, TwoRunsOfOneSeedSendDifferentPromptsUnlessTheSaltIsGiven) {
  ModellessServer srv;
  BenchOptions o = Options(srv.server.url(), "", 4);
  o.model = "m";
  Result<BenchResult> first = RunBench(o);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  const std::vector<std::string> a = srv.TakePrompts();
  ASSERT_EQ(a.size(), 4u);
  Result<BenchResult> second = RunBench(o);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  const std::vector<std::string> b = srv.TakePrompts();
  ASSERT_EQ(b.size(), 4u);
  for (const std::string& p : b) EXPECT_EQ(std::count(a.begin(), a.end(), p), 0) << p;
  ASSERT_TRUE(first->manifest["prompts"]["salt"].is_number_unsigned());
  EXPECT_NE(first->manifest["prompts"]["salt"], second->manifest["prompts"]["salt"]);

  o.prompt_salt = first->manifest["prompts"]["salt"].get<uint64_t>();
  Result<BenchResult> again = RunBench(o);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(srv.TakePrompts(), a);
  EXPECT_EQ(again->manifest["prompts"]["salt"], first->manifest["prompts"]["salt"]);
}

// Issue: every request went out without "model", every one answered 400, exit 0. No model
// id known: refuse before any load; --model supplies it.
TEST(BenchSessionTest, NoModelIdRefusesBeforeSendingLoadAndModelFlagSuppliesIt) {
  ModellessServer srv;
  ASSERT_FALSE(srv.cap.raw.empty());
  BenchOptions o = Options(srv.server.url(), "", 4);
  o.card.model.id.clear();
  Result<BenchResult> r = RunBench(o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(r.status().message().find("--model"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("HTTP 404"), std::string::npos) << r.status().message();
  EXPECT_EQ(srv.generations.load(), 0);

  o.model = "m";
  r = RunBench(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->summary.counts.succeeded, 4) << r->first_error;
  EXPECT_EQ(r->manifest["model"]["id"], "m");
}

// The served model differs from the card's: said before any load is sent (with the --model
// to use), and when every request then fails the first error is kept for the terminal.
TEST(BenchSessionTest, ServedModelMismatchIsSaidBeforeLoadAndTheFirstErrorIsKept) {
  TestServer srv;
  const std::string out = TempDir("mismatch");
  BenchOptions o = Options(srv.url, out, 3);
  o.card.model.id = "other-model";
  std::vector<std::string> notices;
  bool records_existed = false;
  o.on_notice = [&](const std::string& n) {
    notices.push_back(n);
    records_existed = records_existed || fs::exists(out + "/requests.jsonl");
  };
  Result<BenchResult> r = RunBench(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(notices.size(), 1u);
  EXPECT_NE(notices[0].find("--model tiny-model"), std::string::npos) << notices[0];
  EXPECT_FALSE(records_existed);
  EXPECT_EQ(r->summary.counts.succeeded, 0);
  EXPECT_NE(r->first_error.find("http_4xx: HTTP 404"), std::string::npos) << r->first_error;
  EXPECT_NE(r->first_error.find("other-model"), std::string::npos) << r->first_error;
}

}  // namespace
}  // namespace infereng::job

namespace infereng::job {
namespace {

// The engine's /metrics scraped during the run, on the records' time axis (issue 12 §1).
TEST(BenchSessionTest, ScrapesEngineMetricsPeriodicallyIntoTheRunDir) {
  TestServer srv;
  const std::string out = TempDir("scrape");
  BenchOptions o = Options(srv.url, out, 0);
  o.requests.reset();
  o.duration = 600 * kNanosPerMilli;
  o.scrape_interval = 100 * kNanosPerMilli;
  Result<BenchResult> r = RunBench(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::ifstream in(out + "/engine_metrics.jsonl");
  std::vector<nlohmann::json> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(nlohmann::json::parse(l));
  ASSERT_GE(lines.size(), 4u) << "about one line per 100 ms of a 0.6 s run, plus the last";
  EXPECT_EQ(lines.front()["engine"], "infereng");
  const double end_s = r->summary.window_end_s;
  for (const nlohmann::json& l : lines) {
    EXPECT_FALSE(l.contains("error")) << l.dump();
    EXPECT_TRUE(l["signals"].contains("waiting")) << l.dump();
    EXPECT_GT(l["t_s"].get<double>(), 0);
    EXPECT_LT(l["t_s"].get<double>(), end_s + 30) << "on the run's t0, not the epoch";
  }
  EXPECT_TRUE(lines.back()["signals"].contains("prompt_tokens_per_s")) << lines.back().dump();
}

TEST(BenchSessionTest, NoScrapeWritesNoSeries) {
  TestServer srv;
  const std::string out = TempDir("noscrape");
  BenchOptions o = Options(srv.url, out, 10);
  o.scrape_interval = 0;
  Result<BenchResult> r = RunBench(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(fs::exists(out + "/engine_metrics.jsonl"));
  EXPECT_TRUE(fs::exists(out + "/engine_metrics_after.prom"));
}

}  // namespace
}  // namespace infereng::job
