// Trace replay through the command table (issue 14): `run`, `bench` and `simulate --trace`
// on the real Mooncake slice reproduce the prefix-cache hit rate its hash_ids imply, in the
// embedded engine's own counters and in the twin; a bad trace line is exit 2 naming
// FILE:LINE before any load; window flags without a trace are a usage error.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/exit_codes.h"
#include "testing/cli_runner.h"
#include "testing/paths.h"

namespace infereng::cli {
namespace {

namespace fs = std::filesystem;

using Ran = testing::CliRun;
Ran Cli(const std::vector<std::string>& args) { return testing::RunCli(args); }

std::string Dir(const std::string& name) {
  fs::path p = fs::temp_directory_path() / ("infereng_cli_replay_" + std::to_string(getpid()) + "_" + name);
  fs::remove_all(p);
  fs::create_directories(p);
  return p.string();
}

std::string ShortMooncake() { return testing::SourceDir() + "/src/trace/testdata/mooncake-conv-short.jsonl"; }

// The embedded engine on the twin (llama-3.1-8b on h100-sxm: ~470k tokens of KV, so the
// 100 requests' 165 distinct 512-token blocks are never evicted, as the implied rate
// assumes). Outputs are capped at 16 tokens to keep the test short; the prompts are the
// trace's.
std::string WriteCard(const std::string& dir) {
  const std::string path = dir + "/replay.yaml";
  std::ofstream(path) << "name: replay\n"
                         "traffic:\n"
                         "  arrival: {process: poisson, rate: 1rps}\n"
                         "  input_tokens: 64\n"
                         "  output_tokens: 8\n"
                         "product:\n"
                         "  max_output_tokens: 16\n"
                         "model:\n"
                         "  id: tiny-model\n"
                         "  architecture: llama-3.1-8b\n"
                         "deployment:\n"
                         "  accelerator: h100-sxm\n";
  return path;
}

std::string ReadAll(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The proof, measured: 100 requests of the Mooncake slice sent for real to the
// embedded engine (prefix caching on, engine and trace both 20x faster than real time, so
// the engine sees the trace's own timing). Its prefix-cache counters (hit tokens / prompt
// tokens) show the rate the hash_ids imply (46.9%) within a few points; without the
// hash-id prompts (every prompt unique) the engine would show ~0%.
TEST(CmdReplayTest, RunOnMooncakeShowsTheImpliedPrefixHitRateInTheEngine) {
  const std::string dir = Dir("run");
  const std::string out = dir + "/out";
  Ran r = Cli({"run", WriteCard(dir), "--trace", ShortMooncake(), "--trace-requests", "100", "--trace-speedup", "20",
               "--speedup", "20", "--out", out, "--json", "--quiet"});
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  const auto summary = nlohmann::json::parse(r.out);
  EXPECT_EQ(summary["counts"]["records"], 100);
  const auto& trace = summary["trace"];
  EXPECT_EQ(trace["file"], "mooncake-conv-short.jsonl");
  EXPECT_EQ(trace["format"], "mooncake");
  EXPECT_EQ(trace["requests"], 100);
  EXPECT_EQ(trace["speedup"], 20);
  EXPECT_EQ(trace["window"]["requests"], 100);
  EXPECT_EQ(trace["prefix"]["cache_blocks"], "unbounded");
  const double implied = trace["prefix"]["implied_hit_rate"].get<double>();
  EXPECT_NEAR(implied, 0.469, 0.001);
  ASSERT_TRUE(summary.contains("engine_metrics")) << summary.dump();
  const double measured = summary["engine_metrics"]["prefix_cache_hit_rate"].get<double>();
  EXPECT_NEAR(measured, implied, 0.03) << "engine hit rate " << measured << " vs implied " << implied;
  const auto manifest = nlohmann::json::parse(ReadAll(out + "/manifest.json"));
  EXPECT_EQ(manifest["trace"]["sha256"], trace["sha256"]);
  EXPECT_EQ(manifest["trace"]["sha256"].get<std::string>().size(), 64u);
}

// The same replay in the twin (virtual time): its prefix cache sees the same blocks.
TEST(CmdReplayTest, SimulateOnMooncakeShowsTheImpliedPrefixHitRateInTheTwin) {
  const std::string dir = Dir("sim");
  Ran r = Cli({"simulate", "--card", WriteCard(dir), "--trace", ShortMooncake(), "--trace-requests", "100",
               "--json"});
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["counts"]["records"], 100);
  const double implied = j["trace"]["prefix"]["implied_hit_rate"].get<double>();
  const double twin = j["twin"]["prefix_hit_rate"].get<double>();
  EXPECT_NEAR(twin, implied, 0.03) << "twin hit rate " << twin << " vs implied " << implied;

  // A window later in the trace: the scan, the replay and the note agree on what was sent.
  r = Cli({"simulate", "--card", WriteCard(dir), "--trace", ShortMooncake(), "--trace-start", "100s",
           "--trace-duration", "60s"});
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  EXPECT_NE(r.out.find("trace mooncake-conv-short.jsonl: its hash_ids imply a prefix-cache hit rate of"),
            std::string::npos)
      << r.out;
}

TEST(CmdReplayTest, BadTraceLineExitsTwoNamingFileAndLine) {
  const std::string dir = Dir("bad");
  const std::string bad = dir + "/bad.jsonl";
  std::ofstream(bad) << "{\"timestamp\": 0, \"input_length\": 10, \"output_length\": 2, \"hash_ids\": [1]}\n"
                        "{\"timestamp\": 5, \"input_length\": 10, \"output_length\": 2, \"hash_ids\": [1]}\n"
                        "{\"timestamp\": 9, \"input_length\": -4, \"output_length\": 2, \"hash_ids\": [1]}\n";
  const std::string card = WriteCard(dir);
  // Before any connection (bench: the target is never reached) and before the embedded
  // engine starts (run); the bad line is after the window, and still fails.
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"bench", "--target", "http://127.0.0.1:1", "--trace", bad},
        std::vector<std::string>{"run", card, "--trace", bad, "--trace-requests", "1"},
        std::vector<std::string>{"simulate", "--card", card, "--trace", bad}}) {
    Ran r = Cli(args);
    EXPECT_EQ(r.rc, kExitUsage) << args[0] << ": " << r.err;
    EXPECT_NE(r.err.find(bad + ":3: "), std::string::npos) << args[0] << ": " << r.err;
    EXPECT_NE(r.err.find("input_length"), std::string::npos) << r.err;
  }
}

TEST(CmdReplayTest, TraceFlagMistakesAreUsageErrors) {
  const std::string dir = Dir("flags");
  const std::string card = WriteCard(dir);
  struct Case {
    std::vector<std::string> args;
    std::string expect;
  } cases[] = {
      {{"simulate", "--card", card, "--trace-start", "10s"}, "need --trace FILE"},
      {{"simulate", "--card", card, "--trace", dir + "/none.jsonl"}, "--trace: cannot read trace file"},
      {{"simulate", "--card", card, "--trace", ShortMooncake(), "--trace-format", "parquet"}, "--trace-format: unknown"},
      {{"simulate", "--card", card, "--trace", ShortMooncake(), "--trace-start", "1h"}, "holds no request"},
      {{"simulate", "--card", card, "--trace", ShortMooncake(), "--trace-sessions", "yes"},
       "--trace-sessions: expected sessions or tasks"},
      {{"simulate", "--card", card, "--trace", ShortMooncake(), "--trace-parallel-window", "1s"},
       "--trace-parallel-window needs --trace-sessions"},
      {{"simulate", "--card", card, "--trace", ShortMooncake(), "--trace-sessions", "tasks", "--trace-parallel-window",
        "2h"},
       "--trace-parallel-window: expected a duration from 0 to 1h"},
      {{"simulate", "--card", card, "--trace", ShortMooncake(), "--trace-sessions", "tasks", "--concurrency", "4"},
       "open loop"},
  };
  for (const Case& c : cases) {
    Ran r = Cli(c.args);
    EXPECT_EQ(r.rc, kExitUsage) << c.expect << ": " << r.err;
    EXPECT_NE(r.err.find(c.expect), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace infereng::cli
