// The card traffic section written from a real trace: it parses, `card check` no longer
// lists the traffic as missing or assumed, and the workload generator (the one bench and
// the twin both draw from) fed that card reproduces the trace's length quantiles within 5%
// and its mean rate within 2%.
#include "trace/card_out.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "card/card_parser.h"
#include "card/gaps.h"
#include "core/stats.h"
#include "testing/paths.h"
#include "trace/reader.h"
#include "workload/generator.h"

namespace infereng::trace {
namespace {

using ::testing::HasSubstr;

class CardOutTest : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("infereng_card_out_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

TEST_P(CardOutTest, FittedCardReproducesTheTrace) {
  const std::string trace = testing::SourceDir() + "/src/trace/testdata/" + GetParam();
  auto c = CharacterizeFile(trace, {}, {});
  ASSERT_TRUE(c.ok()) << c.status().message();
  auto out = TrafficCard(*c, "fitted");
  ASSERT_TRUE(out.ok()) << out.status().message();
  for (const auto& [name, body] : out->files) std::ofstream(dir_ / name) << body;
  const std::string card_path = (dir_ / "fitted.yaml").string();
  std::ofstream(card_path) << out->yaml;
  EXPECT_THAT(out->yaml, HasSubstr("note: \"measured: trace sha256:" + c->sha256.substr(0, 12)));
  EXPECT_THAT(out->yaml, HasSubstr("#   sha256 " + c->sha256));

  auto card = card::LoadCardFile(card_path);
  ASSERT_TRUE(card.ok()) << card.status().message() << "\n" << out->yaml;
  for (const card::Gap& g : card::FindGaps(*card)) {
    for (const char* p : {"traffic.arrival", "traffic.peak_rate", "traffic.input_tokens", "traffic.output_tokens"}) {
      EXPECT_NE(g.path, p) << "still listed: " << g.path;
    }
    EXPECT_NE(g.kind, card::Gap::Kind::kAssumed) << g.path;
  }

  workload::GeneratorOptions go;
  go.seed = 7;
  go.max_requests = 100'000;
  auto gen = workload::Generator::FromCard(*card, go);
  ASSERT_TRUE(gen.ok()) << gen.status().message();
  std::vector<double> in, outl;
  double last_t = 0;
  while (auto r = gen->Next()) {
    in.push_back(r->input_tokens);
    outl.push_back(r->output_tokens);
    last_t = static_cast<double>(r->t_arrival) / 1e9;
  }
  ASSERT_EQ(in.size(), 100'000u);
  const double rate = static_cast<double>(in.size()) / last_t;
  EXPECT_NEAR(rate / c->arrivals.mean_rate, 1, 0.02) << "rate " << rate << " vs " << c->arrivals.mean_rate;
  const stats::SampleStats si = stats::SummarizeInPlace(in), so = stats::SummarizeInPlace(outl);
  for (double p : {50.0, 90.0, 99.0}) {
    EXPECT_NEAR(si.AtStandardPercentile(p) / c->input.stats.AtStandardPercentile(p), 1, 0.05) << "input p" << p;
    EXPECT_NEAR(so.AtStandardPercentile(p) / c->output.stats.AtStandardPercentile(p), 1, 0.05) << "output p" << p;
  }
}

INSTANTIATE_TEST_SUITE_P(RealSlices, CardOutTest, ::testing::Values("azure-conv-2000.csv", "mooncake-conv-1000.jsonl"));

}  // namespace
}  // namespace infereng::trace
