#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "card/templates.h"
#include "cli/command.h"
#include "testing/paths.h"

namespace infereng::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

struct CardRun {
  int rc;
  std::string out, err;
};

CardRun Card(std::vector<std::string> args, const std::string& stdin_text = "") {
  std::vector<const char*> argv = {"infereng", "card"};
  for (const auto& a : args) argv.push_back(a.c_str());
  std::ostringstream out, err;
  std::istringstream in(stdin_text);
  CommandIo io{out, err, false, &in};
  int rc = RunMain(static_cast<int>(argv.size()), argv.data(), io);
  return {rc, out.str(), err.str()};
}

// Runs any command (not only `card`), for comparing what card check and the others say.
CardRun Infereng(std::vector<std::string> args) {
  std::vector<const char*> argv = {"infereng"};
  for (const auto& a : args) argv.push_back(a.c_str());
  std::ostringstream out, err;
  CommandIo io{out, err};
  int rc = RunMain(static_cast<int>(argv.size()), argv.data(), io);
  return {rc, out.str(), err.str()};
}

// A small valid card; the tests below break one line of it.
constexpr const char* kSmallCard = R"(name: small
traffic:
  arrival: {process: poisson, rate: 2rps}
  input_tokens: 200
  output_tokens: 50
model:
  architecture: llama-3.1-8b
deployment:
  accelerator: h100-sxm
engine:
  max_num_seqs: 64
constraints:
  accelerators: [h100-sxm, l40s]
bench:
  duration: 5s
)";

class CmdCardTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("infereng_cmd_card_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    const auto p = dir_ / name;
    std::ofstream(p) << text;
    return p.string();
  }
  std::filesystem::path dir_;
};

TEST_F(CmdCardTest, InitPrintsOrWritesTheTemplate) {
  CardRun r = Card({"init", "--template", "batch"});
  EXPECT_EQ(r.rc, 0);
  EXPECT_EQ(r.out, card::FindCardTemplate("batch")->yaml);

  const std::string out = (dir_ / "mine.yaml").string();
  r = Card({"init", "--out", out});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("wrote " + out));
  r = Card({"check", out});
  EXPECT_EQ(r.rc, 0) << r.err;

  r = Card({"init", "--out", out});  // exists
  EXPECT_EQ(r.rc, 2);
  EXPECT_THAT(r.err, HasSubstr("--force"));
  EXPECT_EQ(Card({"init", "--out", out, "--force", "-t", "agent"}).rc, 0);

  r = Card({"init", "--template", "chatbot"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_THAT(r.err, HasSubstr("chat, batch, agent"));
}

TEST_F(CmdCardTest, EveryExamplePassesCheckAndListsGaps) {
  for (const auto& t : card::CardTemplates()) {
    const std::string path = testing::SourceDir() + "/examples/" + std::string(t.name) + ".yaml";
    CardRun r = Card({"check", path});
    EXPECT_EQ(r.rc, 0) << path << "\n" << r.err;
    EXPECT_THAT(r.out, HasSubstr(": valid card"));
    EXPECT_THAT(r.out, HasSubstr("Workload assumptions and missing measurements"));
    EXPECT_THAT(r.out, HasSubstr("missing  baseline.run"));
  }
  CardRun chat = Card({"check", testing::SourceDir() + "/examples/chat.yaml"});
  EXPECT_THAT(chat.out, HasSubstr("assumed  traffic.arrival.rate (" + testing::SourceDir() + "/examples/chat.yaml:"));
  CardRun agent = Card({"check", testing::SourceDir() + "/examples/agent.yaml"});
  EXPECT_THAT(agent.out, HasSubstr("assumed  traffic.agent_steps"));
}

// `card check` prints the per-request thresholds in use and warns, with FILE:LINE, when a
// p50 objective alone would become the bar 99% of requests must clear.
TEST_F(CmdCardTest, CheckWarnsAboutAmbiguousSlosAndPrintsGoodputThresholds) {
  const std::string path = Write("amb.yaml", "name: x\nslo:\n  ttft: {p50: 200ms}\n  attainment: 0.99\n");
  CardRun r = Card({"check", path});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("goodput thresholds (per request): ttft <= 200 ms (default: the card's "
                               "highest-percentile objectives: ttft p50)"));
  EXPECT_THAT(r.out, HasSubstr("  warning  slo.ttft (" + path + ":3): the only ttft objective is p50 <= 200 ms"));
  CardRun chat = Card({"check", testing::SourceDir() + "/examples/chat.yaml"});
  EXPECT_THAT(chat.out, HasSubstr("goodput thresholds (per request): ttft <= 500 ms, itl <= 50 ms (own p99 ITL), "
                                  "e2e <= 30000 ms (slo.goodput)"));
  EXPECT_THAT(chat.out, Not(HasSubstr("warning")));
}

TEST_F(CmdCardTest, BadCardExitsTwoNamingFileLineAndField) {
  const std::string path = Write("bad.yaml", "name: x\nslo:\n  ttft: {p99: fast}\n");
  CardRun r = Card({"check", path});
  EXPECT_EQ(r.rc, 2);
  EXPECT_THAT(r.err, HasSubstr(path + ":3: slo.ttft.p99: expected a duration"));
  EXPECT_THAT(r.err, HasSubstr("got \"fast\""));
  EXPECT_EQ(r.out, "");

  r = Card({"check", (dir_ / "nope.yaml").string()});
  EXPECT_EQ(r.rc, 2);
  EXPECT_THAT(r.err, HasSubstr("cannot read card file"));
  EXPECT_EQ(Card({}).rc, 2);
  EXPECT_EQ(Card({"check"}).rc, 2);
  EXPECT_EQ(Card({"--help"}).rc, 0);

  r = Card({"check", dir_.string()});  // a directory is not "cannot read"
  EXPECT_EQ(r.rc, 2);
  EXPECT_THAT(r.err, HasSubstr(dir_.string() + " is a directory, not a card file"));
}

// Issue 10 item 11: card check runs the validation every command runs, so what it passes
// no command rejects, and each error names FILE:LINE and the card field (never --set).
TEST_F(CmdCardTest, CheckRejectsWhatEveryCommandRejectsWithFileAndLine) {
  struct Case {
    std::string from, to, location, detail;
  };
  const Case cases[] = {
      {"max_num_seqs: 64", "max_num_seqs: lots", ":11: engine.max_num_seqs: expected an integer >= 1", "got \"lots\""},
      {"max_num_seqs: 64", "max_num_seqs: 99999999999", ":11: engine.max_num_seqs: expected an integer >= 1",
       "at most 2147483647"},
      {"max_num_seqs: 64", "max_num_sqes: 64", ":11: engine.max_num_sqes: unknown setting",
       "did you mean \"engine.max_num_seqs\""},
      {"architecture: llama-3.1-8b", "architecture: llama-9", ":7: model.architecture: unknown model \"llama-9\"", ""},
      {"accelerator: h100-sxm", "accelerator: h100-sxn", ":9: deployment.accelerator: unknown accelerator",
       "did you mean \"h100-sxm\""},
      {"[h100-sxm, l40s]", "[h100-sxm, l40]", ":13: constraints.accelerators[1]: unknown accelerator \"l40\"", ""},
  };
  for (const Case& c : cases) {
    std::string text = kSmallCard;
    text.replace(text.find(c.from), c.from.size(), c.to);
    const std::string path = Write("broken.yaml", text);
    const CardRun check = Card({"check", path});
    EXPECT_EQ(check.rc, 2) << c.to;
    EXPECT_THAT(check.err, HasSubstr(path + c.location)) << c.to;
    EXPECT_THAT(check.err, HasSubstr(c.detail)) << c.to;
    EXPECT_THAT(check.err, Not(HasSubstr("--set"))) << c.to;
    // simulate (and every other command) rejects it with the same words.
    const CardRun sim = Infereng({"simulate", "--card", path, "--duration", "1s"});
    EXPECT_EQ(sim.rc, 2) << c.to;
    EXPECT_THAT(sim.err, HasSubstr(path + c.location)) << c.to;
    EXPECT_THAT(sim.err, Not(HasSubstr("--set"))) << c.to;
  }
  EXPECT_EQ(Card({"check", Write("ok.yaml", kSmallCard)}).rc, 0);
}

TEST_F(CmdCardTest, CheckReadsStandardInput) {
  CardRun r = Card({"check", "-"}, kSmallCard);
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("<stdin>: valid card \"small\""));
  r = Card({"check", "-"}, "name: x\nslo:\n  ttft: {p99: fast}\n");
  EXPECT_EQ(r.rc, 2);
  EXPECT_THAT(r.err, HasSubstr("<stdin>:3: slo.ttft.p99: expected a duration"));
}

}  // namespace
}  // namespace infereng::cli

namespace infereng::cli {
namespace {

// card check on a vision card: what each image costs by the model's rule, the assumed
// encoder size with its line, and the vision fields the card leaves out.
TEST(CmdCardVision, CheckSaysWhatAnImageCostsAndListsTheVisionGaps) {
  const std::string yaml = R"(name: vlm
traffic:
  arrival: 2rps
  input_tokens: 200
  output_tokens: 50
  images: {width: 1920, height: 1080}
model:
  vision: {patch_size: 14, merge_size: 2, encoder_params: {value: 6.75e8, assumed: true}}
)";
  CardRun r = Card({"check", "-"}, yaml);
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("images: each 1920x1080 image is 1222 prompt tokens (4888 encoder patches at 1316x728)"));
  EXPECT_THAT(r.out, HasSubstr("assumed  model.vision.encoder_params (<stdin>:8)"));
  EXPECT_THAT(r.out, HasSubstr("missing  traffic.images.count"));
  CardRun bad = Card({"check", "-"}, "name: x\nproduct: {modality: vision}\n");
  EXPECT_EQ(bad.rc, 2);
  EXPECT_THAT(bad.err, HasSubstr("images on chat requests are traffic.images on a text card"));
}

}  // namespace
}  // namespace infereng::cli
