// Manifest diff: which variables changed, read from manifests and the cards they name.
#include "job/manifest_diff.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "card/card_parser.h"

namespace infereng::job {
namespace {

namespace fs = std::filesystem;

std::string TempDir(const std::string& name) {
  fs::path p = fs::temp_directory_path() / ("infereng_mdiff_test_" + std::to_string(getpid()) + "_" + name);
  fs::remove_all(p);
  fs::create_directories(p);
  return p.string();
}

// A card file and the manifest a run of it writes (card path and hash, seed).
nlohmann::json CardManifest(const std::string& path, const std::string& yaml, uint64_t seed) {
  std::ofstream(path) << yaml;
  auto card = card::LoadCardFile(path);
  EXPECT_TRUE(card.ok()) << card.status().ToString();
  return {{"card", {{"name", card->name}, {"path", path}, {"sha256", card->content_hash}}},
          {"seed", seed},
          {"tool", {{"version", "0.1.0"}, {"git_commit", "abc"}}},
          {"start_time_utc", path},  // differs per run: never a variable
          {"load", {{"rate_rps", 5}}}};
}

std::string Card(const std::string& engine, const std::string& precision = "bf16", uint64_t seed = 7) {
  return R"(name: c
traffic:
  arrival: {process: poisson, rate: 5rps}
  input_tokens: 100
  output_tokens: 20
model:
  id: m
  precision: )" + precision + R"(
engine:
)" + engine + R"(
bench:
  seed: )" + std::to_string(seed) + "\n";
}

TEST(ManifestDiffTest, OneEngineKnobIsOneVariable) {
  const std::string dir = TempDir("knob");
  auto a = CardManifest(dir + "/a.yaml", Card("  max_num_seqs: 64"), 7);
  auto b = CardManifest(dir + "/b.yaml", Card("  max_num_seqs: 256"), 7);
  ManifestDiff d = DiffManifests(a, b);
  EXPECT_EQ(d.kind, ExperimentKind::kOneVariable);
  ASSERT_EQ(d.variables.size(), 1u);
  EXPECT_EQ(d.variables[0], "engine knob max_num_seqs");
  ASSERT_EQ(d.changes.size(), 1u);
  EXPECT_EQ(d.changes[0].key, "card.engine.max_num_seqs");
  EXPECT_EQ(d.changes[0].a, "64");
  EXPECT_EQ(d.changes[0].b, "256");
  fs::remove_all(dir);
}

TEST(ManifestDiffTest, MoreThanOneVariableIsSaidLoudly) {
  const std::string dir = TempDir("multi");
  auto a = CardManifest(dir + "/a.yaml", Card("  max_num_seqs: 64", "bf16"), 7);
  auto b = CardManifest(dir + "/b.yaml", Card("  max_num_seqs: 128", "fp8"), 7);
  b["tool"]["git_commit"] = "def";
  ManifestDiff d = DiffManifests(a, b);
  EXPECT_EQ(d.kind, ExperimentKind::kMultiVariable);
  EXPECT_EQ(d.variables, (std::vector<std::string>{"engine knob max_num_seqs", "precision", "client version"}));
  EXPECT_STREQ(ExperimentKindName(d.kind), "not a one-variable experiment");
  fs::remove_all(dir);
}

TEST(ManifestDiffTest, SeedOnlyIsAReplicateAndCountsOnce) {
  const std::string dir = TempDir("seed");
  auto a = CardManifest(dir + "/a.yaml", Card("  max_num_seqs: 64", "bf16", 7), 7);
  auto b = CardManifest(dir + "/b.yaml", Card("  max_num_seqs: 64", "bf16", 8), 8);
  ManifestDiff d = DiffManifests(a, b);
  EXPECT_EQ(d.kind, ExperimentKind::kReplicate);
  EXPECT_EQ(d.variables, std::vector<std::string>{"seed"});
  EXPECT_EQ(d.changes.size(), 2u);  // card.bench.seed and manifest.seed: one variable
  // Same manifest on both sides: identical.
  EXPECT_EQ(DiffManifests(a, a).kind, ExperimentKind::kIdentical);
  fs::remove_all(dir);
}

// Every run draws its own prompt salt: two runs that differ only in it are replicates, and
// beside one knob it is not a second variable.
TEST(ManifestDiffTest, APromptSaltIsASamplingDetailLikeTheSeed) {
  const std::string dir = TempDir("salt");
  auto a = CardManifest(dir + "/a.yaml", Card("  max_num_seqs: 64"), 7);
  auto b = CardManifest(dir + "/b.yaml", Card("  max_num_seqs: 64"), 7);
  a["prompts"] = {{"salt", 11}};
  b["prompts"] = {{"salt", 12}};
  EXPECT_EQ(DiffManifests(a, b).kind, ExperimentKind::kReplicate);
  auto c = CardManifest(dir + "/c.yaml", Card("  max_num_seqs: 256"), 7);
  c["prompts"] = {{"salt", 13}};
  ManifestDiff d = DiffManifests(a, c);
  EXPECT_EQ(d.kind, ExperimentKind::kOneVariable);
  EXPECT_EQ(d.variables, (std::vector<std::string>{"engine knob max_num_seqs", "seed"}));
  fs::remove_all(dir);
}

TEST(ManifestDiffTest, ACardEditedSinceTheRunIsNotReadAsTheOneThatRan) {
  const std::string dir = TempDir("edited");
  auto a = CardManifest(dir + "/a.yaml", Card("  max_num_seqs: 64"), 7);
  auto b = CardManifest(dir + "/b.yaml", Card("  max_num_seqs: 256"), 7);
  std::ofstream(dir + "/b.yaml") << Card("  max_num_seqs: 512");  // edited after the run
  ManifestDiff d = DiffManifests(a, b);
  ASSERT_EQ(d.variables, std::vector<std::string>{"card"});
  ASSERT_FALSE(d.notes.empty());
  EXPECT_NE(d.notes[0].find("changed since the run"), std::string::npos) << d.notes[0];
  fs::remove_all(dir);
}

TEST(ManifestDiffTest, SimulatedPointsDiffTheirSetKnobsAndEmbeddedPortsAreNotTargets) {
  nlohmann::json a = {{"source", "simulated"}, {"sets", {"engine.max_num_seqs=32"}}};
  nlohmann::json b = {{"source", "simulated"}, {"sets", {"engine.max_num_seqs=64", "cluster.router=least_loaded"}}};
  ManifestDiff d = DiffManifests(a, b);
  EXPECT_EQ(d.variables, (std::vector<std::string>{"hardware", "engine knob max_num_seqs"}));

  nlohmann::json ea = {{"target", "http://127.0.0.1:41000"}, {"embedded_server", {{"speedup", 4}, {"seed", 42}}}};
  nlohmann::json eb = {{"target", "http://127.0.0.1:42000"}, {"embedded_server", {{"speedup", 4}, {"seed", 42}}}};
  EXPECT_EQ(DiffManifests(ea, eb).kind, ExperimentKind::kIdentical);
  // Measured vs simulated: the source is a variable.
  const std::vector<std::string> mixed = DiffManifests(nlohmann::json::object(), a).variables;
  EXPECT_NE(std::find(mixed.begin(), mixed.end(), "source"), mixed.end());
  // No manifest: said, not guessed.
  EXPECT_EQ(DiffManifests(nullptr, a).notes.size(), 1u);
}

// A canary's two paired runs (job/canary.h) share one start: when each shard began and ended
// describes the run, it is not a variable; which share of the stream it sent is the load.
TEST(ManifestDiffTest, AShardsStartTimesAreNotVariablesButItsShareIsTheLoad) {
  auto shard = [](int n, int64_t t0, double late) {
    return nlohmann::json{{"shard", {{"k", 0}, {"n", n}, {"start_at_unix_ns", 100}, {"t0_unix_ns", t0},
                                     {"t0_utc", std::to_string(t0)}, {"start_lateness_ms", late},
                                     {"window_end_ns", t0 / 2}, {"partial", false}}}};
  };
  EXPECT_EQ(DiffManifests(shard(4, 1000, 0.1), shard(4, 1060, 0.2)).kind, ExperimentKind::kIdentical);
  EXPECT_EQ(DiffManifests(shard(4, 1000, 0.1), shard(2, 1000, 0.1)).variables, (std::vector<std::string>{"load"}));
}

}  // namespace
}  // namespace infereng::job
