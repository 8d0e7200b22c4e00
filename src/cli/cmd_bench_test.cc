// `infereng bench` / `infereng run` through the command table, in-process: exit codes and
// the API-key scan (a distinctive key must appear in no file, no stdout, no stderr); and as
// a child process, a Ctrl-C (SIGTERM) mid-run: exit 130 (143) with the partial files written.
#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "job/embedded_engine.h"
#include "card/card_parser.h"
#include "cli/command.h"
#include "cli/exit_codes.h"
#include "metrics/records_io.h"
#include "testing/child_process.h"
#include "testing/cli_runner.h"

namespace infereng::cli {
namespace {

namespace fs = std::filesystem;

using Ran = testing::CliRun;
Ran Cli(const std::vector<std::string>& args) { return testing::RunCli(args); }

std::string Dir(const std::string& name) {
  fs::path p = fs::temp_directory_path() / ("infereng_cli_bench_" + std::to_string(getpid()) + "_" + name);
  fs::remove_all(p);
  fs::create_directories(p);
  return p.string();
}

std::string WriteCard(const std::string& dir, const std::string& ttft = "5s") {
  const std::string path = dir + "/tiny.yaml";
  std::ofstream(path) << "name: tiny\n"
                         "traffic:\n"
                         "  arrival: {process: poisson, rate: 200rps}\n"
                         "  input_tokens: 16\n"
                         "  output_tokens: 4\n"
                         "slo:\n"
                         "  ttft: {p99: " << ttft << "}\n"
                         "model:\n"
                         "  id: tiny-model\n"
                         "bench:\n"
                         "  duration: 1s\n"
                         "  warmup: 0s\n";
  return path;
}

// A tiny card the embedded engine runs on the twin (llama-3.1-8b on h100-sxm).
std::string WriteTwinCard(const std::string& dir, const std::string& rate, const std::string& bench_extra = "") {
  const std::string path = dir + "/twin.yaml";
  std::ofstream(path) << "name: tiny-twin\n"
                         "traffic:\n"
                         "  arrival: {process: poisson, rate: " << rate << "}\n"
                         "  input_tokens: 64\n"
                         "  output_tokens: 8\n"
                         "slo:\n"
                         "  ttft: {p99: 2s}\n"
                         "model:\n"
                         "  id: tiny-model\n"
                         "  architecture: llama-3.1-8b\n"
                         "deployment:\n"
                         "  accelerator: h100-sxm\n"
                         "bench:\n"
                      << bench_extra << "  warmup: 0s\n";
  return path;
}

std::string ReadAll(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

constexpr const char* kKey = "sk-h7-DISTINCTIVE-7f3a9c1e5b";

TEST(CmdBenchTest, ApiKeyNeverAppearsInAnyArtefact) {
  const std::string dir = Dir("key");
  const std::string card = WriteCard(dir);
  setenv("H7_TEST_API_KEY", kKey, 1);
  std::ofstream(dir + "/key.txt") << kKey << "\n";
  const std::string out = dir + "/out";
  std::vector<Ran> runs = {
      Cli({"run", card, "--requests", "12", "--speedup", "20", "--out", out, "--api-key-env", "H7_TEST_API_KEY"}),
      Cli({"run", card, "--requests", "5", "--speedup", "20", "--out", dir + "/out2", "--api-key-file", dir + "/key.txt",
           "--json"}),
      // Errors: an unreachable target, and a URL that carries the key itself.
      Cli({"bench", "--target", "http://127.0.0.1:1", "--card", card, "--api-key-env", "H7_TEST_API_KEY"}),
      Cli({"bench", "--target", std::string("http://user:") + kKey + "@127.0.0.1:1/v1", "--card", card}),
      Cli({"bench", "--target", std::string("http://127.0.0.1:1/v1?api_key=") + kKey, "--card", card}),
  };
  EXPECT_EQ(runs[0].rc, kExitOk) << runs[0].err;
  EXPECT_EQ(runs[1].rc, kExitOk) << runs[1].err;
  EXPECT_EQ(runs[2].rc, kExitRuntime) << runs[2].err;
  EXPECT_EQ(runs[3].rc, kExitUsage) << runs[3].err;
  EXPECT_EQ(runs[4].rc, kExitUsage) << runs[4].err;
  for (size_t i = 0; i < runs.size(); ++i) {
    EXPECT_EQ(runs[i].out.find(kKey), std::string::npos) << "stdout of run " << i;
    EXPECT_EQ(runs[i].err.find(kKey), std::string::npos) << "stderr of run " << i << ": " << runs[i].err;
  }
  int files = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file() || e.path().filename() == "key.txt") continue;
    ++files;
    EXPECT_EQ(ReadAll(e.path()).find(kKey), std::string::npos) << e.path();
  }
  EXPECT_GE(files, 6);  // requests.jsonl, summary.json, manifest.json (x2), ...
  EXPECT_NE(ReadAll(out + "/manifest.json").find("env:H7_TEST_API_KEY"), std::string::npos);
  unsetenv("H7_TEST_API_KEY");
}

TEST(CmdBenchTest, FailedSloExitsOne) {
  const std::string dir = Dir("slo");
  Ran r = Cli({"run", WriteCard(dir, "1us"), "--requests", "5", "--speedup", "20", "--out", dir + "/out"});
  EXPECT_EQ(r.rc, kExitCheckFailed) << r.err;
  EXPECT_NE(r.out.find("FAIL"), std::string::npos) << r.out;
  // A failed SLO still writes the report.
  EXPECT_TRUE(fs::exists(dir + "/out/report.html")) << r.out;
}

// Issue 19: a pass rate below quality.pass_threshold exited 1 under "success rate 100.00%"
// with nothing saying why. Now the summary has a quality line (rate, interval, threshold,
// FAIL) with failing cases, and the verdict on stderr names quality as the reason.
TEST(CmdBenchTest, QualityBelowThresholdExitsOneAndSaysWhy) {
  const std::string dir = Dir("quality");
  std::ofstream(dir + "/evals.jsonl") << R"({"prompt": "What is the capital of France?", "expect_exact": "Paris"})" "\n";
  const std::string card = dir + "/q.yaml";
  std::ofstream(card) << "name: q\n"
                         "traffic:\n"
                         "  arrival: {process: poisson, rate: 200rps}\n"
                         "  input_tokens: 16\n"
                         "  output_tokens: 4\n"
                         "model:\n"
                         "  id: tiny-model\n"
                         "quality:\n"
                         "  eval_set: " << dir << "/evals.jsonl\n"
                         "  pass_threshold: 0.5\n"
                         "bench:\n"
                         "  warmup: 0s\n";
  Ran r = Cli({"run", card, "--requests", "6", "--speedup", "20", "--quality-every", "1", "--quality-accuracy", "0",
               "--out", dir + "/out"});
  EXPECT_EQ(r.rc, kExitCheckFailed) << r.err;
  EXPECT_NE(r.out.find("quality: 0 of 6 passed (0.0%, 95% CI [0.0%, 39.0%]), threshold 50.0% FAIL"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("failed item 0 (exact): What is the capital of France?"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("expected \"Paris\"; got"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("infereng run: FAIL: quality pass rate 0.0% (0 of 6, 95% CI [0.0%, 39.0%]) is below the "
                       "threshold 50.0%"),
            std::string::npos)
      << r.err;
  const auto sj = nlohmann::json::parse(ReadAll(dir + "/out/summary.json"));
  EXPECT_EQ(sj["quality"]["pass"], false);
  EXPECT_EQ(sj["quality"]["failures"].size(), 6u);
  EXPECT_EQ(sj["quality"]["failures"][0]["expected"], "\"Paris\"");
  EXPECT_EQ(sj["quality"]["by_check"]["exact"]["checked"], 6);

  // Every answer right: the same card passes, and the quality line says PASS.
  r = Cli({"run", card, "--requests", "6", "--speedup", "20", "--quality-every", "1", "--quality-accuracy", "1",
           "--out", dir + "/ok"});
  EXPECT_EQ(r.rc, kExitOk) << r.err;
  EXPECT_NE(r.out.find("quality: 6 of 6 passed (100.0%, 95% CI [61.0%, 100.0%]), threshold 50.0% PASS"),
            std::string::npos)
      << r.out;
}

// Issue: every request failed, no SLOs in the card, exit 0 and no example error. Now: exit 3
// (a runtime failure, not an SLO miss) with the first error's class and message; and `run`
// says why there is no twin prediction (the card has no architecture).
TEST(CmdBenchTest, EveryRequestFailingExitsThreeWithTheFirstError) {
  const std::string dir = Dir("allfail");
  const std::string card = dir + "/noslo.yaml";
  std::ofstream(card) << "name: noslo\n"
                         "traffic:\n"
                         "  arrival: {process: poisson, rate: 200rps}\n"
                         "  input_tokens: 16\n"
                         "  output_tokens: 4\n"
                         "model:\n"
                         "  id: tiny-model\n"
                         "bench:\n"
                         "  duration: 1s\n"
                         "  warmup: 0s\n";
  Ran r = Cli({"run", card, "--requests", "4", "--speedup", "20", "--faults", "error5xx=1", "--out", dir + "/out",
               "--quiet"});
  EXPECT_EQ(r.rc, kExitRuntime) << r.out << r.err;
  EXPECT_NE(r.err.find("every measured request failed (4 of 4)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("first error: http_5xx: HTTP 500"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("no twin prediction: the card has no model.architecture"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::exists(dir + "/out/report.html"));
}

TEST(CmdBenchTest, RunWritesTheTwinPredictionAndTheReport) {
  const std::string dir = Dir("predict");
  const std::string card = WriteTwinCard(dir, "20rps", "  duration: 1s\n");
  const std::string out = dir + "/out";
  // Real time (speed-up 1): the twin's prediction is comparable and is written beside it.
  Ran r = Cli({"run", card, "--out", out, "--quiet"});
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  EXPECT_TRUE(fs::exists(out + "/predicted/summary.json"));
  EXPECT_TRUE(fs::exists(out + "/predicted/requests.jsonl"));
  auto predicted = nlohmann::json::parse(ReadAll(out + "/predicted/summary.json"));
  EXPECT_GT(predicted["counts"]["records"].get<int>(), 5);
  const std::string html = ReadAll(out + "/report.html");
  EXPECT_NE(html.find("predicted (twin)"), std::string::npos);
  EXPECT_NE(r.out.find("report: " + out + "/report.html"), std::string::npos) << r.out;

  // With a speed-up the measured times are not engine time: no prediction.
  const std::string fast = dir + "/fast";
  r = Cli({"run", card, "--out", fast, "--quiet", "--speedup", "10"});
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  EXPECT_FALSE(fs::exists(fast + "/predicted"));
  EXPECT_NE(r.err.find("no twin prediction: the engine ran with a speed-up"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::exists(fast + "/report.html"));
}

TEST(CmdBenchTest, RunDrivesTheTwinWithTrialsAndColdStart) {
  const std::string dir = Dir("twin");
  const std::string card = WriteTwinCard(dir, "40rps");
  const std::string out = dir + "/out";
  Ran r = Cli({"run", card, "--requests", "8", "--trials", "2", "--cold-start", "2", "--speedup", "20", "--out", out,
               "--json"});
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  auto summary = nlohmann::json::parse(r.out);
  EXPECT_EQ(summary["trials"]["trials"], 2);
  EXPECT_EQ(summary["cold_start"]["counts"]["records"], 2);
  EXPECT_TRUE(fs::exists(out + "/trial-1/requests.jsonl"));
  EXPECT_TRUE(fs::exists(out + "/trial-2/summary.json"));
  EXPECT_TRUE(fs::exists(out + "/cold_requests.jsonl"));
  auto manifest = nlohmann::json::parse(ReadAll(out + "/manifest.json"));
  EXPECT_EQ(manifest["embedded_server"]["engine"].get<std::string>().rfind("twin:", 0), 0u) << manifest.dump();
  // The verdict is over every trial, with its rule.
  EXPECT_EQ(summary["trials"]["verdict"]["rule"], "the run passes only when every trial passes");
  EXPECT_EQ(summary["trials"]["verdict"]["per_trial"].size(), 2u);

  // The terminal names trial 1 as the table's, prints a line per trial and the verdict.
  r = Cli({"run", card, "--requests", "4", "--trials", "2", "--speedup", "20", "--out", dir + "/text", "--quiet"});
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  for (const char* want : {"Trial 1 of 2", "\n  1      PASS", "\n  2      PASS", "[CI n/a]",
                           "Verdict over 2 trials: PASS (the run passes only when every trial passes)"}) {
    EXPECT_NE(r.out.find(want), std::string::npos) << want << "\n" << r.out;
  }
}

// --out on an earlier run: refused (exit 2, nothing touched) instead of mixing the old
// trial-2/ into the new run's report; with --force the earlier run's files go first.
TEST(CmdBenchTest, OutHoldingAnEarlierRunIsRefusedUnlessForced) {
  const std::string dir = Dir("rerun");
  const std::string card = WriteTwinCard(dir, "40rps");
  const std::string out = dir + "/out";
  Ran r = Cli({"run", card, "--requests", "4", "--trials", "2", "--speedup", "20", "--out", out, "--quiet"});
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  ASSERT_TRUE(fs::exists(out + "/trial-2/summary.json"));
  const std::string before = ReadAll(out + "/summary.json");

  r = Cli({"run", card, "--requests", "4", "--speedup", "20", "--out", out, "--quiet"});
  EXPECT_EQ(r.rc, kExitUsage) << r.out;
  EXPECT_NE(r.err.find("not empty"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--force"), std::string::npos) << r.err;
  EXPECT_EQ(ReadAll(out + "/summary.json"), before);
  r = Cli({"bench", "--card", card, "--target", "http://127.0.0.1:1", "--out", out, "--quiet"});
  EXPECT_EQ(r.rc, kExitUsage) << r.err;  // refused before any connection

  r = Cli({"run", card, "--requests", "4", "--speedup", "20", "--out", out, "--quiet", "--force"});
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  EXPECT_FALSE(fs::exists(out + "/trial-1")) << "stale trial directories survived --force";
  EXPECT_FALSE(fs::exists(out + "/trial-2"));
  EXPECT_TRUE(fs::exists(out + "/summary.json"));
  EXPECT_TRUE(fs::exists(out + "/report.html"));
}

// run --unix-socket: the embedded engine listens on the socket and the client connects
// there; the manifest says so. bench --unix-socket against a path nobody listens on: a
// connect error naming the socket, and exit 3 (target unreachable).
TEST(CmdBenchTest, RunAndBenchOverAUnixSocket) {
  const std::string dir = Dir("uds");
  const std::string card = WriteTwinCard(dir, "40rps");
  const std::string sock = dir + "/serve.sock";
  const std::string out = dir + "/out";
  Ran r = Cli({"run", card, "--requests", "6", "--speedup", "20", "--unix-socket", sock, "--out", out, "--json"});
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  auto summary = nlohmann::json::parse(r.out);
  EXPECT_EQ(summary["counts"]["succeeded"], 6) << r.out;
  auto manifest = nlohmann::json::parse(ReadAll(out + "/manifest.json"));
  EXPECT_EQ(manifest["embedded_server"]["transport"], "unix:" + sock);
  EXPECT_NE(manifest["target"].get<std::string>().find("via unix:" + sock), std::string::npos) << manifest["target"];
  EXPECT_FALSE(fs::exists(sock)) << "the embedded engine left its socket file";

  r = Cli({"bench", "--card", card, "--target", "http://localhost", "--unix-socket", dir + "/nobody.sock", "--requests", "2",
           "--out", dir + "/b", "--quiet"});
  EXPECT_EQ(r.rc, kExitRuntime) << r.out << r.err;
  EXPECT_NE((r.out + r.err).find("nobody.sock"), std::string::npos) << r.out << r.err;
}

TEST(CmdBenchTest, BadFlagsAreUsageErrors) {
  const std::string dir = Dir("flags");
  const std::string card = WriteCard(dir);
  EXPECT_EQ(Cli({"bench", "--help"}).rc, kExitOk);
  EXPECT_EQ(Cli({"run", "--help"}).rc, kExitOk);
  EXPECT_EQ(Cli({"bench", "--card", card}).rc, kExitUsage);  // no --target
  Ran r = Cli({"run", card, "--duration", "soon"});
  EXPECT_EQ(r.rc, kExitUsage);
  EXPECT_NE(r.err.find("--duration"), std::string::npos) << r.err;
  EXPECT_EQ(Cli({"run", card, "--endpoint", "embeddings"}).rc, kExitUsage);
  EXPECT_EQ(Cli({"run", card, "--endpoint", "rerank"}).rc, kExitUsage);
  r = Cli({"run", card, "--length-control", "always"});
  EXPECT_EQ(r.rc, kExitUsage);
  EXPECT_NE(r.err.find("--length-control always"), std::string::npos) << r.err;
  EXPECT_EQ(Cli({"run", dir + "/missing.yaml"}).rc, kExitUsage);
}

// bench without --card: a quick look from vLLM-style flags against a server (the embedded
// engine, started here). The card is synthesised from the flags and the manifest says so.
TEST(CmdBenchTest, CardlessBenchIsAQuickLookWithVllmFlagNames) {
  const std::string dir = Dir("cardless");
  auto server_card = card::LoadCardFile(WriteCard(dir));
  ASSERT_TRUE(server_card.ok()) << server_card.status().ToString();
  job::EmbeddedOptions eo;
  eo.speedup = 20;
  auto server = job::StartEmbedded(*server_card, eo);
  ASSERT_TRUE(server.ok()) << server.status().ToString();

  // Defaults: every request at once (vLLM's --request-rate inf), no warm-up, no glossary.
  const std::string out = dir + "/out";
  Ran r = Cli({"bench", "--base-url", server->url, "--model", "tiny-model", "--input-len", "16", "--output-len", "4",
               "--num-prompts", "20", "--result-dir", out, "--quiet"});
  ASSERT_EQ(r.rc, kExitOk) << r.out << r.err;
  EXPECT_NE(r.out.find("TTFT"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("Metric boundaries"), std::string::npos) << "the glossary is behind --explain\n" << r.out;
  auto summary = nlohmann::json::parse(ReadAll(out + "/summary.json"));
  EXPECT_EQ(summary["counts"]["succeeded"], 20) << summary["counts"].dump();
  auto manifest = nlohmann::json::parse(ReadAll(out + "/manifest.json"));
  const nlohmann::json& flags = manifest["card"]["synthesised_from_flags"];
  EXPECT_EQ(flags["model"], "tiny-model") << manifest["card"].dump();
  EXPECT_EQ(flags["input_len"], 16);
  EXPECT_EQ(flags["output_len"], 4);
  EXPECT_EQ(flags["num_requests"], 20);
  EXPECT_EQ(flags["request_rate"], "inf");
  EXPECT_EQ(manifest["card"]["path"], "");
  EXPECT_EQ(manifest["model"]["id"], "tiny-model");
  EXPECT_EQ(manifest["load"]["mode"], "closed_loop");
  EXPECT_EQ(manifest["load"]["concurrency"], 20) << "all 20 at once";
  EXPECT_EQ(manifest["load"]["requests"], 20);
  EXPECT_EQ(manifest["load"]["warmup_s"], 0.0);
  auto records = metrics::ReadRecordsFile(out + "/requests.jsonl");
  ASSERT_TRUE(records.ok()) << records.status().ToString();
  ASSERT_EQ(records->size(), 20u);
  for (const auto& rec : *records) {
    EXPECT_EQ(rec.input_tokens_target, 16);
    EXPECT_EQ(rec.output_tokens_target, 4);
  }

  // vLLM's --request-rate / --max-concurrency / --num-requests; --explain adds the glossary.
  const std::string out2 = dir + "/out2";
  r = Cli({"bench", "--target", server->url, "--input-len", "8", "--output-len", "2", "--request-rate", "200",
           "--max-concurrency", "4", "--num-requests", "10", "--out", out2, "--quiet", "--explain", "--endpoint",
           "/v1/completions"});
  ASSERT_EQ(r.rc, kExitOk) << r.out << r.err;
  EXPECT_NE(r.out.find("Metric boundaries"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Same quantity in other tools"), std::string::npos) << r.out;
  manifest = nlohmann::json::parse(ReadAll(out2 + "/manifest.json"));
  EXPECT_EQ(manifest["load"]["mode"], "open_loop_capped") << manifest["load"].dump();
  EXPECT_EQ(manifest["load"]["rate_rps"], 200.0);
  EXPECT_EQ(manifest["load"]["concurrency"], 4);
  EXPECT_EQ(manifest["load"]["endpoint"], "completions") << "vLLM's route form of --endpoint";
  EXPECT_EQ(manifest["card"]["synthesised_from_flags"]["request_rate"], "200");
  EXPECT_EQ(manifest["card"]["synthesised_from_flags"]["max_concurrency"], 4);
  EXPECT_TRUE(manifest["card"]["synthesised_from_flags"]["model"].is_null()) << "the server's model was used";
  EXPECT_EQ(nlohmann::json::parse(ReadAll(out2 + "/summary.json"))["counts"]["succeeded"], 10);
  server->server->Stop();
}

TEST(CmdBenchTest, CardlessBenchBadFlagsAreUsageErrors) {
  const std::string dir = Dir("cardless-flags");
  const std::string card = WriteCard(dir);
  const std::string url = "http://127.0.0.1:1";  // never reached: each fails before connecting
  auto usage = [](const Ran& r, const std::string& want) {
    EXPECT_EQ(r.rc, kExitUsage) << r.out << r.err;
    EXPECT_NE(r.err.find(want), std::string::npos) << r.err;
  };
  usage(Cli({"bench", "--target", url, "--card", card, "--input-len", "16"}), "--input-len");
  usage(Cli({"bench", "--target", url, "--input-len", "0"}), "--input-len: must be between 1 and");
  usage(Cli({"bench", "--target", url, "--output-len", "0"}), "--output-len");
  usage(Cli({"bench", "--target", url, "--num-prompts", "0"}), "--num-requests");
  usage(Cli({"bench", "--target", url, "--duration", "5s"}), "--duration without --card");
  usage(Cli({"bench", "--target", url, "--request-rate", "inf", "--duration", "5s"}), "--rate inf");
  usage(Cli({"bench", "--target", url, "--card", card, "--rate", "inf"}), "--rate inf");  // the card has no count
  usage(Cli({"bench", "--target", url, "--request-rate", "fast"}), "--rate");
  // vLLM flags infereng does not take say what to use instead.
  usage(Cli({"bench", "--target", url, "--backend", "vllm"}), "--backend is a vLLM bench flag, not infereng's");
  usage(Cli({"bench", "--target", url, "--dataset-name=random"}), "(--input-len, --output-len)");
  // An embeddings route on a text card: refused before connecting, naming the modality.
  usage(Cli({"bench", "--target", url, "--endpoint", "/v1/embeddings"}), "the card's product.modality is text");
  usage(Cli({"bench", "--target", url, "--endpoint", "/v1/rerank"}), "(rerank needs a rerank card)");
  usage(Cli({"bench", "--target", url, "--endpoint", "/v1/audio/transcriptions"}),
        "(transcriptions needs a transcription card)");
}

// A file a flag names is input: missing is exit 2 (not 3, "target unreachable"), and a
// directory is called a directory.
TEST(CmdBenchTest, MissingOrDirectoryInputFilesAreUsageErrors) {
  const std::string dir = Dir("files");
  const std::string card = WriteCard(dir);
  Ran r = Cli({"bench", "--target", "https://127.0.0.1:1", "--card", card, "--ca-file", dir + "/nope.pem"});
  EXPECT_EQ(r.rc, kExitUsage) << r.err;
  EXPECT_NE(r.err.find("--ca-file: " + dir + "/nope.pem: no such file"), std::string::npos) << r.err;
  r = Cli({"bench", "--target", "https://127.0.0.1:1", "--card", card, "--ca-file", dir});
  EXPECT_EQ(r.rc, kExitUsage) << r.err;
  EXPECT_NE(r.err.find("--ca-file: " + dir + " is a directory, not a file"), std::string::npos) << r.err;
  r = Cli({"bench", "--target", "http://127.0.0.1:1", "--card", card, "--api-key-file", dir});
  EXPECT_EQ(r.rc, kExitUsage) << r.err;
  EXPECT_NE(r.err.find("is a directory, not a file"), std::string::npos) << r.err;
  r = Cli({"bench", "--target", "http://127.0.0.1:1", "--card", dir});
  EXPECT_EQ(r.rc, kExitUsage) << r.err;
  EXPECT_NE(r.err.find(dir + " is a directory, not a card file"), std::string::npos) << r.err;
}

// Starts `run` on the embedded engine for a long window, waits for finished requests in
// requests.jsonl, sends `sig`, and checks the exit status and the partial artefacts.
void InterruptRunAndCheck(const std::string& name, int sig, int want_exit) {
  const std::string dir = Dir(name);
  const std::string card = WriteTwinCard(dir, "40rps");
  const std::string out = dir + "/out";
  const pid_t pid = testing::SpawnInfereng({"run", card, "--duration", "120s", "--speedup", "20", "--out", out, "--quiet"},
                                           dir + "/log.txt");
  ASSERT_GT(pid, 0);
  const bool started = testing::WaitUntil(
      [&] {
        std::error_code ec;
        return fs::file_size(out + "/requests.jsonl", ec) > 0 && !ec;
      },
      std::chrono::seconds(60));
  if (!started) {
    (void)testing::WaitChild(pid, std::chrono::milliseconds(0));  // kills it
    FAIL() << "no finished request within 60 s\n" << ReadAll(dir + "/log.txt");
  }
  ASSERT_EQ(kill(pid, sig), 0);
  const testing::ChildExit e = testing::WaitChild(pid, std::chrono::seconds(60));
  const std::string log = ReadAll(dir + "/log.txt");
  ASSERT_FALSE(e.timed_out) << log;
  ASSERT_TRUE(e.exited) << "killed by signal " << e.signal << "\n" << log;
  EXPECT_EQ(e.code, want_exit) << log;
  EXPECT_NE(log.find("interrupted"), std::string::npos) << log;

  // Every request that finished is kept, and the summary and report say the run is partial.
  std::ifstream records(out + "/requests.jsonl");
  int lines = 0, interrupted = 0;
  for (std::string line; std::getline(records, line);) {
    if (line.empty()) continue;
    ++lines;
    interrupted += nlohmann::json::parse(line).value("error", "") == "interrupted";
  }
  EXPECT_GE(lines, 1);
  ASSERT_TRUE(fs::exists(out + "/summary.json")) << log;
  auto summary = nlohmann::json::parse(ReadAll(out + "/summary.json"));
  EXPECT_EQ(summary["partial"], true) << summary.dump();
  EXPECT_EQ(summary["counts"]["records"].get<int>(), lines) << summary.dump();
  // Requests the signal cancelled in flight are counted apart, not as failures of the server.
  EXPECT_EQ(summary["counts"]["interrupted"].get<int>(), interrupted) << summary.dump();
  EXPECT_EQ(summary["counts"]["failed"].get<int>(), 0) << summary.dump();
  EXPECT_FALSE(summary["errors"].contains("cancelled")) << summary.dump();
  if (interrupted > 0) {
    EXPECT_NE(log.find("cancelled by interrupt"), std::string::npos) << log;
  }
  EXPECT_TRUE(fs::exists(out + "/manifest.json"));
  EXPECT_TRUE(fs::exists(out + "/report.html")) << log;
  EXPECT_NE(ReadAll(out + "/report.html").find("artial"), std::string::npos);
}

TEST(CmdBenchTest, CtrlCExits130AndWritesThePartialSummaryAndReport) {
  InterruptRunAndCheck("sigint", SIGINT, kExitInterrupted);
  EXPECT_EQ(kExitInterrupted, 128 + SIGINT);
}

TEST(CmdBenchTest, SigtermExits143AndWritesThePartialSummaryAndReport) {
  InterruptRunAndCheck("sigterm", SIGTERM, ExitCodeForSignal(SIGTERM));
  EXPECT_EQ(ExitCodeForSignal(SIGTERM), 143);
}

}  // namespace
}  // namespace infereng::cli
