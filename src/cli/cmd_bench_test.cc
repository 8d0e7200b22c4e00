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

#include "cli/command.h"
#include "cli/exit_codes.h"
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
  EXPECT_EQ(Cli({"run", dir + "/missing.yaml"}).rc, kExitUsage);
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
