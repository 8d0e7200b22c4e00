// In-process tests of `infereng fit`, `models` and `accelerators`: exit codes and output.
#include <sstream>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "testing/paths.h"

namespace infereng::cli {
namespace {

using ::testing::HasSubstr;

struct CmdRun {
  int rc = -1;
  std::string out, err;
};

CmdRun Infereng(std::vector<std::string> args) {
  args.insert(args.begin(), "infereng");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  std::ostringstream out, err;
  CommandIo io{out, err};
  CmdRun r;
  r.rc = RunMain(static_cast<int>(argv.size()), argv.data(), io);
  r.out = out.str();
  r.err = err.str();
  return r;
}

nlohmann::json Json(const CmdRun& r) {
  EXPECT_FALSE(r.out.empty()) << r.err;
  return nlohmann::json::parse(r.out, nullptr, /*allow_exceptions=*/false);
}

TEST(FitCommand, JsonHasTheDocumentedKeys) {
  const CmdRun r = Infereng({"fit", "--model", "llama-3.1-8b", "--accelerator", "h100-sxm", "--json"});
  ASSERT_EQ(r.rc, 0) << r.err;
  const auto j = Json(r);
  for (const char* k : {"weights_bytes", "kv_bytes_per_token", "max_concurrent_sequences", "fits", "headroom_bytes",
                        "decode_step_ms", "prefill_ms", "memory_items", "verdict", "reason"}) {
    EXPECT_TRUE(j.contains(k)) << k;
  }
  EXPECT_NEAR(j["weights_bytes"].get<double>(), 16.06e9, 0.01 * 16.06e9);
  EXPECT_EQ(j["kv_bytes_per_token"].get<double>(), 131072);
  EXPECT_TRUE(j["fits"].get<bool>());
  EXPECT_GT(j["max_concurrent_sequences"].get<int64_t>(), 40);
  EXPECT_GT(j["decode_step_ms"].get<double>(), 5.0);
  EXPECT_LT(j["decode_step_ms"].get<double>(), 8.0);
  std::vector<std::string> keys;
  for (const auto& it : j["memory_items"]) keys.push_back(it["key"]);
  EXPECT_THAT(keys, ::testing::ElementsAre("weights", "activations", "cuda_context", "cuda_graphs", "nccl",
                                           "fragmentation"));
}

TEST(FitCommand, DoesNotFitExitsOneAndSaysWhy) {
  const CmdRun r = Infereng({"fit", "--model", "llama-3.1-70b", "--accelerator", "h100-sxm"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_THAT(r.out, HasSubstr("Verdict: DOES NOT FIT"));
  EXPECT_THAT(r.out, HasSubstr("weights alone take 141.11 GB"));
}

TEST(FitCommand, TwoH100sAreMarginalOrNotByContext) {
  const CmdRun short_ctx =
      Infereng({"fit", "--model", "llama-3.1-70b", "--accelerator", "h100-sxm", "--tp", "2", "--context", "4096", "--json"});
  ASSERT_EQ(short_ctx.rc, 0) << short_ctx.err;
  EXPECT_EQ(Json(short_ctx)["verdict"], "marginal");
  EXPECT_EQ(Json(short_ctx)["deployment"]["count"], 2);  // --count follows --tp
  const CmdRun long_ctx = Infereng(
      {"fit", "--model", "llama-3.1-70b", "--accelerator", "h100-sxm", "--tp", "2", "--context", "32768", "--json"});
  EXPECT_EQ(long_ctx.rc, 1);
  EXPECT_EQ(Json(long_ctx)["verdict"], "does not fit");
  EXPECT_FALSE(Json(long_ctx)["fits"].get<bool>());
  // Lighter overheads (flags) change the verdict at the same context.
  const CmdRun lean = Infereng({"fit", "--model", "llama-3.1-70b", "--accelerator", "h100-sxm", "--tp", "2", "--context",
                             "32768", "--gpu-memory-utilization", "0.95", "--cuda-graphs", "0B", "--fragmentation", "0"});
  EXPECT_EQ(lean.rc, 0) << lean.out << lean.err;
  EXPECT_THAT(lean.out, HasSubstr("Verdict: MARGINAL"));
  const CmdRun tp4 = Infereng({"fit", "--model", "llama-3.1-70b", "--accelerator", "h100-sxm", "--count", "4", "--tp", "4"});
  EXPECT_EQ(tp4.rc, 0);
  EXPECT_THAT(tp4.out, HasSubstr("Verdict: FITS"));
}

// Issue 10 item 12: a batch the KV pool cannot hold is not "marginal" with exit 0.
TEST(FitCommand, BatchLargerThanThePoolDoesNotFit) {
  const CmdRun r = Infereng({"fit", "--model", "llama-3.1-8b", "--accelerator", "h100-sxm", "--batch", "100000"});
  EXPECT_EQ(r.rc, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("Verdict: DOES NOT FIT"));
  EXPECT_THAT(r.out, HasSubstr("fewer than the 100000 requested"));
  const CmdRun j = Infereng({"fit", "--model", "llama-3.1-8b", "--accelerator", "h100-sxm", "--batch", "100000", "--json"});
  EXPECT_FALSE(Json(j)["fits"].get<bool>());
  EXPECT_EQ(Infereng({"fit", "--model", "llama-3.1-8b", "--accelerator", "h100-sxm", "--batch", "4"}).rc, 0);
}

// Each bad flag is named as typed: --tp 0 is not a --count error.
TEST(FitCommand, BadNumbersNameTheirOwnFlag) {
  const CmdRun tp = Infereng({"fit", "--model", "llama-3.1-8b", "--accelerator", "l4", "--tp", "0"});
  EXPECT_EQ(tp.rc, 2);
  EXPECT_THAT(tp.err, HasSubstr("--tp: must be >= 1, got 0"));
  EXPECT_THAT(tp.err, ::testing::Not(HasSubstr("--count")));
  const CmdRun batch = Infereng({"fit", "--model", "llama-3.1-8b", "--accelerator", "l4", "--batch", "-3"});
  EXPECT_EQ(batch.rc, 2);
  EXPECT_THAT(batch.err, HasSubstr("--batch: must be >= 1, got -3"));
  const CmdRun count = Infereng({"fit", "--model", "llama-3.1-8b", "--accelerator", "l4", "--count", "-1"});
  EXPECT_EQ(count.rc, 2);
  EXPECT_THAT(count.err, HasSubstr("--count: must be >= 0, got -1"));
}

TEST(FitCommand, HelpShowsDefaults) {
  const CmdRun h = Infereng({"fit", "--help"});
  EXPECT_EQ(h.rc, 0);
  EXPECT_THAT(h.out, HasSubstr("--context INT=8192"));
  EXPECT_THAT(h.out, HasSubstr("--gpu-memory-utilization FLOAT=0.9"));
  EXPECT_THAT(h.out, HasSubstr("--batch INT=1"));
}

TEST(FitCommand, UnknownNamesExitTwoListingKnownOnes) {
  const CmdRun m = Infereng({"fit", "--model", "llama-9", "--accelerator", "h100-sxm"});
  EXPECT_EQ(m.rc, 2);
  EXPECT_THAT(m.err, HasSubstr("unknown model \"llama-9\""));
  EXPECT_THAT(m.err, HasSubstr("deepseek-v3"));
  const CmdRun a = Infereng({"fit", "--model", "llama-3.1-8b", "--accelerator", "h300"});
  EXPECT_EQ(a.rc, 2);
  EXPECT_THAT(a.err, HasSubstr("a100-80gb, b200, h100-sxm"));
}

TEST(FitCommand, BadInputsExitTwo) {
  EXPECT_EQ(Infereng({"fit", "--accelerator", "h100-sxm"}).rc, 2);  // no model
  const CmdRun p = Infereng({"fit", "--model", "llama-3.1-8b", "--accelerator", "l4", "--precision", "int3"});
  EXPECT_EQ(p.rc, 2);
  EXPECT_THAT(p.err, HasSubstr("--precision"));
  const CmdRun tp = Infereng({"fit", "--model", "llama-3.1-8b", "--accelerator", "l4", "--count", "4", "--tp", "3"});
  EXPECT_EQ(tp.rc, 2);
  EXPECT_THAT(tp.err, HasSubstr("--tp 3 does not divide --count 4"));
  const CmdRun g = Infereng({"fit", "--model", "llama-3.1-8b", "--accelerator", "l4", "--cuda-graphs", "lots"});
  EXPECT_EQ(g.rc, 2);
  EXPECT_THAT(g.err, HasSubstr("--cuda-graphs"));
  const CmdRun cfg = Infereng({"fit", "--model", testing::SourceDir() + "/src/catalog/testdata/missing-layers.json",
                            "--accelerator", "l4"});
  EXPECT_EQ(cfg.rc, 2);
  EXPECT_THAT(cfg.err, HasSubstr("missing-layers.json: missing required key \"num_hidden_layers\""));
  EXPECT_EQ(Infereng({"fit", "--help"}).rc, 0);
}

TEST(FitCommand, ReadsHfConfigAndCard) {
  const CmdRun cfg = Infereng({"fit", "--model", testing::SourceDir() + "/src/catalog/testdata/tiny-llama.json",
                            "--accelerator", "l4", "--json"});
  ASSERT_EQ(cfg.rc, 0) << cfg.err;
  EXPECT_EQ(Json(cfg)["model"], "tiny-llama");  // file stem (a config.json is named after its directory)
  EXPECT_EQ(Json(cfg)["kv_bytes_per_token"].get<double>(), 2.0 * 4 * 2 * 32 * 2);

  const std::string card = testing::SourceDir() + "/examples/chat.yaml";
  const CmdRun c = Infereng({"fit", "--card", card, "--json"});
  ASSERT_EQ(c.rc, 0) << c.err;
  const auto j = Json(c);
  EXPECT_EQ(j["model"], "llama-3.1-8b");
  EXPECT_EQ(j["accelerator"], "h100-sxm");
  EXPECT_EQ(j["context"], 16384);  // product.max_context_tokens
  // Flags override the card.
  const CmdRun o = Infereng({"fit", "--card", card, "--accelerator", "l4", "--context", "2048", "--json"});
  ASSERT_EQ(o.rc, 0) << o.err;
  EXPECT_EQ(Json(o)["accelerator"], "l4");
  EXPECT_EQ(Json(o)["context"], 2048);
  EXPECT_EQ(Infereng({"fit", "--card", "/no/such/card.yaml"}).rc, 2);
}

TEST(CatalogCommands, ListNamesAndFigures) {
  const CmdRun m = Infereng({"models"});
  EXPECT_EQ(m.rc, 0);
  EXPECT_THAT(m.out, HasSubstr("deepseek-v3"));
  EXPECT_THAT(m.out, HasSubstr("MLA (latent 512 + rope 64), MoE 8 of 256 + 1 shared"));
  const CmdRun a = Infereng({"accelerators"});
  EXPECT_EQ(a.rc, 0);
  EXPECT_THAT(a.out, HasSubstr("tpu-v5e"));
  EXPECT_THAT(a.out, HasSubstr("85.5GB"));
  const CmdRun aj = Infereng({"accelerators", "--json"});
  ASSERT_EQ(aj.rc, 0);
  const auto j = nlohmann::json::parse(aj.out);
  EXPECT_EQ(j.size(), 8u);
  EXPECT_TRUE(j[0]["sources"].contains("memory"));
  EXPECT_EQ(Infereng({"models", "--json"}).rc, 0);
}

}  // namespace
}  // namespace infereng::cli
