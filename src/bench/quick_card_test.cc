// QuickCard: the card bench synthesises without --card (fixed lengths, N requests, no
// warm-up, no SLOs), its flag-named errors, and what the manifest records.
#include "bench/quick_card.h"

#include <gtest/gtest.h>

#include "bench/load_plan.h"

namespace infereng::bench {
namespace {

// The flags with the given counts (designated initializers would leave the strings unnamed).
QuickCardFlags Flags(int64_t input_len, int64_t output_len, int64_t num_requests) {
  QuickCardFlags f;
  f.input_len = input_len;
  f.output_len = output_len;
  f.num_requests = num_requests;
  return f;
}

TEST(QuickCardTest, FixedLengthsNRequestsNoWarmupNoSlos) {
  QuickCardFlags f = Flags(512, 64, 20);
  f.model = "m";
  auto c = QuickCard(f);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->model.id, "m");
  EXPECT_EQ(c->traffic.input_tokens.kind, card::Distribution::Kind::kFixed);
  EXPECT_EQ(c->traffic.input_tokens.value, 512);
  EXPECT_EQ(c->traffic.output_tokens.value, 64);
  EXPECT_TRUE(c->slo.latency.empty());
  EXPECT_TRUE(c->source_path.empty());

  // The plan it gives with no load flags but a count: N measured requests from t0.
  BenchOptions o;
  o.card = *c;
  o.concurrency = 20;
  auto plan = ResolveLoadPlan(o);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->requests, 20);
  EXPECT_EQ(plan->warmup, 0);
  EXPECT_EQ(plan->cooldown, 0);
  EXPECT_EQ(plan->trials, 1);
  EXPECT_TRUE(plan->closed_loop);
}

TEST(QuickCardTest, DefaultsAreAQuickLook) {
  QuickCardFlags f;
  EXPECT_EQ(f.input_len, 1024);
  EXPECT_EQ(f.output_len, 128);
  EXPECT_EQ(f.num_requests, 100);
  auto c = QuickCard(f);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE(c->model.id.empty()) << "the server's first model";
}

TEST(QuickCardTest, BadValuesNameTheFlag) {
  auto bad = [](const QuickCardFlags& f, const std::string& want) {
    auto c = QuickCard(f);
    ASSERT_FALSE(c.ok()) << want;
    EXPECT_EQ(c.status().code(), Status::Code::kInvalidArgument);
    EXPECT_NE(c.status().message().find(want), std::string::npos) << c.status().message();
  };
  bad(Flags(0, 128, 100), "--input-len: must be between 1 and 100000000, got 0");
  bad(Flags(1024, -1, 100), "--output-len: must be between 1 and 100000000, got -1");
  bad(Flags(200'000'000, 128, 100), "--input-len");
  bad(Flags(1024, 128, 0), "--num-requests");
}

TEST(QuickCardTest, JsonRecordsTheFlags) {
  QuickCardFlags f = Flags(8, 2, 5);
  f.request_rate = "inf";
  nlohmann::json j = QuickCardJson(f);
  EXPECT_TRUE(j["model"].is_null());
  EXPECT_EQ(j["input_len"], 8);
  EXPECT_EQ(j["output_len"], 2);
  EXPECT_EQ(j["num_requests"], 5);
  EXPECT_EQ(j["request_rate"], "inf");
  EXPECT_TRUE(j["max_concurrency"].is_null());
  EXPECT_TRUE(j["duration"].is_null());
  // A duration measures a window: the default count was not used, so it is not recorded.
  f.request_rate = "5";
  f.duration = "10s";
  j = QuickCardJson(f);
  EXPECT_TRUE(j["num_requests"].is_null());
  EXPECT_EQ(j["duration"], "10s");
  f.num_requests_given = true;
  j = QuickCardJson(f);
  EXPECT_EQ(j["num_requests"], 5);
}

}  // namespace
}  // namespace infereng::bench
