// `infereng sweep` and `infereng report` end to end, in-process: a fixed-point sweep on the
// twin (virtual time, seconds of host time) writes per-point run directories, sweep.json,
// sweep.csv and a report; usage errors exit 2; a Ctrl-C mid-sweep (a child process) exits
// 130 with the finished points written.
#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "cli/exit_codes.h"
#include "testing/child_process.h"
#include "testing/cli_runner.h"
#include "sweep/search.h"
#include "sweep/sweep_io.h"
#include "testing/paths.h"

namespace infereng::cli {
namespace {

namespace fs = std::filesystem;

using Ran = testing::CliRun;
Ran Cli(const std::vector<std::string>& args) { return testing::RunCli(args); }

std::string TempDir(const std::string& name) {
  auto p = fs::temp_directory_path() / ("infereng-sweep-cli-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(p);
  return p.string();
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string ChatCard() { return testing::SourceDir() + "/examples/chat.yaml"; }

// A sweep's --out holding an earlier sweep is refused (exit 2) unless --force, which
// removes the earlier points/ so the report draws only this sweep's.
TEST(SweepCliTest, OutHoldingAnEarlierSweepIsRefusedUnlessForced) {
  std::string out = TempDir("rerun");
  const std::vector<std::string> args = {"sweep", ChatCard(), "--simulate", "--points", "1,2", "--point-duration",
                                         "4s", "--warmup", "1s", "--out", out};
  Ran r = Cli(args);
  ASSERT_TRUE(r.rc == kExitOk || r.rc == kExitCheckFailed) << r.err << r.out;
  fs::create_directories(out + "/points/99-stale");
  r = Cli(args);
  EXPECT_EQ(r.rc, kExitUsage) << r.out;
  EXPECT_NE(r.err.find("--force"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::exists(out + "/points/99-stale"));
  std::vector<std::string> forced = args;
  forced.push_back("--force");
  r = Cli(forced);
  ASSERT_TRUE(r.rc == kExitOk || r.rc == kExitCheckFailed) << r.err << r.out;
  EXPECT_FALSE(fs::exists(out + "/points/99-stale"));
  EXPECT_TRUE(fs::exists(out + "/sweep.json"));
}

// A card whose name climbs out of the folder is refused before anything is written
// (issue 10: sweep used to write sweep-x/../../outside/ without --out).
TEST(SweepCliTest, CardNameWithAPathIsRefused) {
  std::string dir = TempDir("name");
  fs::create_directories(dir);
  std::ofstream(dir + "/card.yaml") << "name: \"x/../../outside\"\ntraffic: {concurrency: 1}\n";
  Ran r = Cli({"sweep", dir + "/card.yaml", "--simulate"});
  EXPECT_EQ(r.rc, kExitUsage) << r.out;
  EXPECT_NE(r.err.find("card.yaml:1: name"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("path separator"), std::string::npos) << r.err;
  r = Cli({"card", "check", dir + "/card.yaml"});
  EXPECT_EQ(r.rc, kExitUsage) << r.out;
  EXPECT_NE(r.err.find("card.yaml:1: name"), std::string::npos) << r.err;
}

TEST(SweepCliTest, SimulatedFixedPointsWriteEverything) {
  std::string out = TempDir("sim");
  Ran r = Cli({"sweep", ChatCard(), "--simulate", "--points", "1,40", "--point-duration", "6s", "--warmup", "1s", "--out", out});
  ASSERT_TRUE(r.rc == kExitOk || r.rc == kExitCheckFailed) << r.err << r.out;
  EXPECT_NE(r.out.find("Saturation:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Max goodput under SLO"), std::string::npos);
  ASSERT_TRUE(fs::exists(out + "/sweep.json"));
  EXPECT_TRUE(fs::exists(out + "/sweep.csv"));
  EXPECT_TRUE(fs::exists(out + "/report.html"));
  auto f = sweep::ReadSweepJson(out + "/sweep.json");
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  ASSERT_EQ(f->result.points.size(), 2u);
  EXPECT_EQ(f->result.source, "simulated");
  for (const sweep::SweepPoint& p : f->result.points) {
    EXPECT_TRUE(fs::exists(out + "/" + p.dir + "/requests.jsonl")) << p.dir;
    EXPECT_TRUE(fs::exists(out + "/" + p.dir + "/summary.json")) << p.dir;
    EXPECT_TRUE(fs::exists(out + "/" + p.dir + "/report.html")) << p.dir;
  }
  // 40 req/s of chat on one replica is far past saturation; 1 req/s is not.
  EXPECT_FALSE(sweep::PointSaturated(f->result.points[0], sweep::LoadKind::kRate, 0.1));
  EXPECT_TRUE(sweep::PointSaturated(f->result.points[1], sweep::LoadKind::kRate, 0.1));
  ASSERT_TRUE(f->result.saturation_load);
  EXPECT_DOUBLE_EQ(*f->result.saturation_load, 40);

  Ran rep = Cli({"report", out, "--no-point-reports"});
  EXPECT_EQ(rep.rc, kExitOk) << rep.err;
  EXPECT_NE(rep.out.find("charts"), std::string::npos);
  fs::remove_all(out);
}

// A small chat card (short outputs) for a measured sweep against the embedded engine.
std::string WriteSmallCard(const std::string& dir) {
  fs::create_directories(dir);
  std::string path = dir + "/small.yaml";
  std::ofstream(path) << R"(name: small-chat
product: {task: chat, max_output_tokens: 64, streaming: true, timeout: 30s}
traffic:
  arrival: {process: poisson, rate: 2rps}
  input_tokens: {fixed: 200}
  output_tokens: {fixed: 16}
slo:
  ttft: {p99: 2s}
  attainment: 0.9
model: {id: meta-llama/Llama-3.1-8B-Instruct, architecture: llama-3.1-8b}
deployment: {accelerator: h100-sxm, count: 1}
bench: {duration: 4s, warmup: 1s, trials: 1, seed: 7}
)";
  return path;
}

TEST(SweepCliTest, MeasuredPointAgainstTheEmbeddedEngine) {
  std::string out = TempDir("measured");
  std::string card = WriteSmallCard(out + "-card");
  Ran r = Cli({"sweep", card, "--points", "2", "--point-duration", "3s", "--warmup", "0.5s", "--speedup", "4", "--out", out});
  ASSERT_TRUE(r.rc == kExitOk || r.rc == kExitCheckFailed) << r.err << r.out;
  auto f = sweep::ReadSweepJson(out + "/sweep.json");
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  ASSERT_EQ(f->result.points.size(), 1u);
  const sweep::SweepPoint& p = f->result.points[0];
  EXPECT_EQ(f->result.source, "measured");
  EXPECT_DOUBLE_EQ(f->result.speedup, 4);
  EXPECT_GT(p.requests, 0);
  EXPECT_EQ(p.errors, 0);
  // Engine-time figures: the point ran at 8 req/s wall (2 x speedup 4), reported as ~2.
  EXPECT_GT(p.offered_rps, 1.0);
  EXPECT_LT(p.offered_rps, 4.0);
  EXPECT_TRUE(fs::exists(out + "/" + p.dir + "/requests.jsonl"));
  EXPECT_TRUE(fs::exists(out + "/" + p.dir + "/manifest.json"));
  EXPECT_TRUE(fs::exists(out + "/report.html"));
  ASSERT_EQ(f->predicted.size(), 1u) << "the twin's prediction at the same load";
  // The prediction covers the measured window in engine time: 3 s wall x speed-up 4 (it used
  // to simulate 3 s including the warm-up: a quarter of the requests in a shorter window).
  const sweep::SweepPoint& q = f->predicted[0];
  EXPECT_NEAR(p.window_s, 12, 1.5) << "engine-time window";
  EXPECT_NEAR(q.window_s, p.window_s, 0.15 * p.window_s);
  EXPECT_NEAR(static_cast<double>(q.requests), static_cast<double>(p.requests), 0.3 * p.requests + 3);
  fs::remove_all(out);
  fs::remove_all(out + "-card");
}

TEST(SweepCliTest, CtrlCExits130AndWritesTheFinishedPoints) {
  std::string out = TempDir("sigint");
  std::string card = WriteSmallCard(out + "-card");
  const std::string log = out + "-card/log.txt";
  const pid_t pid = testing::SpawnInfereng({"sweep", card, "--points", "2,3", "--point-duration", "2s", "--warmup", "0s",
                                            "--speedup", "2", "--no-predict", "--out", out},
                                           log);
  ASSERT_GT(pid, 0);
  // Interrupt once the second point has started: the first one is finished and written.
  const bool second_started = testing::WaitUntil(
      [&] {
        std::error_code ec;
        for (const auto& e : fs::directory_iterator(out + "/points", ec)) {
          if (e.path().filename().string().starts_with("01-")) return true;
        }
        return false;
      },
      std::chrono::seconds(60));
  if (!second_started) {
    (void)testing::WaitChild(pid, std::chrono::milliseconds(0));  // kills it
    FAIL() << "the second point did not start within 60 s\n" << ReadAll(log);
  }
  ASSERT_EQ(kill(pid, SIGINT), 0);
  const testing::ChildExit e = testing::WaitChild(pid, std::chrono::seconds(60));
  ASSERT_FALSE(e.timed_out) << ReadAll(log);
  ASSERT_TRUE(e.exited) << "killed by signal " << e.signal << "\n" << ReadAll(log);
  EXPECT_EQ(e.code, kExitInterrupted) << ReadAll(log);
  EXPECT_NE(ReadAll(log).find("interrupted"), std::string::npos) << ReadAll(log);

  auto f = sweep::ReadSweepJson(out + "/sweep.json");
  ASSERT_TRUE(f.ok()) << f.status().ToString() << "\n" << ReadAll(log);
  ASSERT_EQ(f->result.points.size(), 1u) << ReadAll(log);
  // Interrupted is partial, not "a point failed to run".
  const nlohmann::json raw = nlohmann::json::parse(ReadAll(out + "/sweep.json"));
  EXPECT_EQ(raw["partial"], true) << raw.dump();
  EXPECT_EQ(raw["error"], "") << raw.dump();
  EXPECT_NE(raw["stop_reason"].get<std::string>().find("interrupted"), std::string::npos) << raw.dump();
  EXPECT_EQ(raw["stop_reason"].get<std::string>().find("failed"), std::string::npos) << raw.dump();
  EXPECT_TRUE(fs::exists(out + "/" + f->result.points[0].dir + "/summary.json"));
  EXPECT_TRUE(fs::exists(out + "/sweep.csv"));
  EXPECT_TRUE(fs::exists(out + "/report.html"));
  fs::remove_all(out);
  fs::remove_all(out + "-card");
}

// --by concurrency on the twin: each point is a closed loop of that many users, as the
// measured sweep runs it (it used to be refused: the twin was open loop only).
TEST(SweepCliTest, SimulatedConcurrencySweepRunsClosedLoops) {
  std::string out = TempDir("conc");
  std::string card = WriteSmallCard(out + "-card");
  Ran r = Cli({"sweep", card, "--simulate", "--by", "concurrency", "--points", "1,4", "--point-duration", "20s",
               "--out", out});
  ASSERT_TRUE(r.rc == kExitOk || r.rc == kExitCheckFailed) << r.err << r.out;
  auto f = sweep::ReadSweepJson(out + "/sweep.json");
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  ASSERT_EQ(f->result.points.size(), 2u);
  for (const sweep::SweepPoint& p : f->result.points) {
    std::ifstream m(out + "/" + p.dir + "/manifest.json");
    const nlohmann::json j = nlohmann::json::parse(m);
    EXPECT_EQ(j["twin"]["load"]["mode"], "closed_loop");
    EXPECT_EQ(j["twin"]["load"]["concurrency"], static_cast<int>(p.load));
  }
  // 4 users get more done than 1 on an idle engine.
  EXPECT_GT(f->result.points[1].throughput_rps, 2.5 * f->result.points[0].throughput_rps);
  fs::remove_all(out);
  fs::remove_all(out + "-card");
}

TEST(SweepCliTest, UsageErrors) {
  EXPECT_EQ(Cli({"sweep"}).rc, kExitUsage);
  EXPECT_EQ(Cli({"sweep", ChatCard(), "--by", "tokens"}).rc, kExitUsage);
  Ran bad = Cli({"sweep", ChatCard(), "--simulate", "--points", "1,fast", "--out", TempDir("bad")});
  EXPECT_EQ(bad.rc, kExitUsage);
  EXPECT_NE(bad.err.find("--points"), std::string::npos) << bad.err;
  Ran missing = Cli({"sweep", "/nonexistent/card.yaml", "--simulate"});
  EXPECT_EQ(missing.rc, kExitUsage) << missing.err;
  EXPECT_EQ(Cli({"sweep", "--help"}).rc, kExitOk);
  fs::remove_all(TempDir("bad"));
}

TEST(ReportCliTest, MissingDirectoryIsUsageError) {
  Ran r = Cli({"report", "/nonexistent/run"});
  EXPECT_EQ(r.rc, kExitUsage);
  EXPECT_NE(r.err.find("not a directory"), std::string::npos) << r.err;
  EXPECT_EQ(Cli({"report", "--help"}).rc, kExitOk);
}

}  // namespace
}  // namespace infereng::cli
