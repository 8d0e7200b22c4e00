// The card traffic section written from a real trace: it parses, `card check` no longer
// lists the traffic as missing or assumed, and the workload generator (the one bench and
// the twin both draw from) fed that card reproduces the trace's length quantiles within 5%
// and its mean rate within 2%.
#include "trace/card_out.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "card/card_parser.h"
#include "card/gaps.h"
#include "core/stats.h"
#include "testing/paths.h"
#include "trace/reader.h"
#include "workload/generator.h"
#include "workload/sessions.h"

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

// --card-sessions on the Mooncake slice (conversations inferred from hash_ids): the session
// planner (the one bench and the twin run sessions with) fed the written card starts
// sessions at the trace's start rate with its first-turn lengths, plans its turns per
// session, and sends each next turn after the trace's time between turns with the trace's
// new message, so the requests per second are the trace's too.
TEST(CardOutSessions, TheSessionsCardReproducesTheConversations) {
  const auto dir = std::filesystem::temp_directory_path() / ("infereng_card_sessions_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto c = CharacterizeFile(testing::SourceDir() + "/src/trace/testdata/mooncake-conv-1000.jsonl", {}, {});
  ASSERT_TRUE(c.ok()) << c.status().message();
  ASSERT_EQ(c->sessions.source, "inferred");
  auto out = TrafficCard(*c, "conv", {.sessions = true});
  ASSERT_TRUE(out.ok()) << out.status().message();
  for (const auto& [name, body] : out->files) std::ofstream(dir / name) << body;
  std::ofstream((dir / "conv.yaml").string()) << out->yaml;
  auto card = card::LoadCardFile((dir / "conv.yaml").string());
  ASSERT_TRUE(card.ok()) << card.status().message() << "\n" << out->yaml;
  ASSERT_TRUE(card->traffic.sessions.has_value());
  for (const card::Gap& g : card::FindGaps(*card)) EXPECT_NE(g.kind, card::Gap::Kind::kAssumed) << g.path;

  auto planner = workload::SessionPlanner::FromCard(*card, workload::GeneratorOptions{.seed = 7, .max_requests = 40'000});
  ASSERT_TRUE(planner.ok()) << planner.status().message();
  std::vector<double> first_input, turns, think_ms, new_message;
  double last_t = 0;
  while (std::optional<workload::RequestSpec> start = planner->NextStart()) {
    first_input.push_back(start->input_tokens);
    turns.push_back(start->turns);
    last_t = static_cast<double>(start->t_arrival) / 1e9;
    if (start->turns < 2) continue;
    workload::SessionPlanner::CallEnd e = planner->NextTurn(*start, true, start->output_tokens);
    ASSERT_EQ(e.next.size(), 1u);
    think_ms.push_back(static_cast<double>(e.next[0].delay) / 1e6);
    new_message.push_back(e.next[0].spec.input_tokens - start->input_tokens - start->output_tokens);
  }
  ASSERT_EQ(first_input.size(), 40'000u);
  const SessionStats& s = c->sessions;
  const double start_rate = static_cast<double>(first_input.size()) / last_t;
  EXPECT_NEAR(start_rate / s.starts.mean_rate, 1, 0.02) << start_rate;
  const stats::SampleStats in = stats::SummarizeInPlace(first_input), tn = stats::SummarizeInPlace(turns),
                           th = stats::SummarizeInPlace(think_ms), nm = stats::SummarizeInPlace(new_message);
  EXPECT_NEAR(tn.mean / s.turns.mean, 1, 0.02) << tn.mean;
  // Requests per second: sessions per second x turns per session.
  EXPECT_NEAR(start_rate * tn.mean / c->arrivals.mean_rate, 1, 0.03);
  for (double p : {50.0, 90.0, 99.0}) {
    EXPECT_NEAR(in.AtStandardPercentile(p) / s.first_input.stats.AtStandardPercentile(p), 1, 0.05) << "first input p" << p;
  }
  // The time between turns and the new message have a few hundred samples and are written
  // empirical: a draw is one of the samples, so a drawn quantile is a sample near the same
  // rank (within 2 ranks: the draws' rank noise is ~0.3% of ~180 samples).
  auto near_rank = [](const std::vector<double>& sorted, double p, double drawn) {
    const auto n = static_cast<std::ptrdiff_t>(sorted.size());
    const auto k = static_cast<std::ptrdiff_t>(std::lround(p / 100 * static_cast<double>(n - 1)));
    return drawn >= sorted[static_cast<size_t>(std::max<std::ptrdiff_t>(0, k - 2))] &&
           drawn <= sorted[static_cast<size_t>(std::min<std::ptrdiff_t>(n - 1, k + 2))];
  };
  ASSERT_EQ(out->yaml.find("think_time: {lognormal"), std::string::npos);
  ASSERT_EQ(out->yaml.find("new_message_tokens: {lognormal"), std::string::npos);
  for (double p : {50.0, 90.0, 95.0}) {
    EXPECT_TRUE(near_rank(s.gap_ms.sorted, p, th.AtStandardPercentile(p))) << "think p" << p;
    EXPECT_TRUE(near_rank(s.new_message_fit.sorted, p, nm.AtStandardPercentile(p))) << "new message p" << p;
  }
  std::filesystem::remove_all(dir);
}

// One conversation of two turns (session ids): no gap between starts to fit, so the starts
// are poisson at 1 session over the span; the card still parses and plans two turns.
TEST(CardOutSessions, OneSessionIsAPoissonStart) {
  Characterizer acc({});
  auto rec = [](double t, int64_t in) {
    TraceRecord r;
    r.t_s = t;
    r.input_tokens = in;
    r.output_tokens = 10;
    r.session = "s";
    return r;
  };
  ASSERT_TRUE(acc.Add(rec(0, 100)).ok());
  ASSERT_TRUE(acc.Add(rec(5, 150)).ok());
  auto c = acc.Finish();
  ASSERT_TRUE(c.ok()) << c.status().message();
  auto out = TrafficCard(*c, "one", {.sessions = true});
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_THAT(out->yaml, HasSubstr("{process: poisson, rate: 0.2rps}"));
  const auto dir = std::filesystem::temp_directory_path() / ("infereng_card_one_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  for (const auto& [name, body] : out->files) std::ofstream(dir / name) << body;
  std::ofstream((dir / "one.yaml").string()) << out->yaml;
  auto card = card::LoadCardFile((dir / "one.yaml").string());
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(card.ok()) << card.status().message() << "\n" << out->yaml;
  ASSERT_TRUE(card->traffic.sessions.has_value());
  auto planner = workload::SessionPlanner::FromCard(*card, workload::GeneratorOptions{.seed = 1, .max_requests = 1});
  ASSERT_TRUE(planner.ok()) << planner.status().message();
  std::optional<workload::RequestSpec> first = planner->NextStart();
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->turns, 2);
  workload::SessionPlanner::CallEnd e = planner->NextTurn(*first, true, 10);
  ASSERT_EQ(e.next.size(), 1u);
  EXPECT_EQ(e.next[0].delay, 5 * kNanosPerSecond);          // the 5 s between the turns
  EXPECT_EQ(e.next[0].spec.input_tokens, 100 + 10 + 40);  // re-sent prompt and answer, 40 new tokens
}

TEST(CardOutSessions, RefusedWithoutSessions) {
  auto c = CharacterizeFile(testing::SourceDir() + "/src/trace/testdata/azure-conv-2000.csv", {}, {});
  ASSERT_TRUE(c.ok()) << c.status().message();
  auto out = TrafficCard(*c, "x", {.sessions = true});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("the trace has no sessions to write"));
}

}  // namespace
}  // namespace infereng::trace
