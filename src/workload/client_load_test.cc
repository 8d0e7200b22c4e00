#include "workload/client_load.h"

#include <gtest/gtest.h>

#include <limits>

#include "card/limits.h"

namespace infereng::workload {
namespace {

card::WorkloadCard CardWith(std::optional<int> concurrency, bool arrival) {
  card::WorkloadCard c;
  c.traffic.arrival.rate_rps = 10;
  c.traffic.input_tokens = card::Distribution::Fixed(100);  // open loop reads the arrival
  c.traffic.output_tokens = card::Distribution::Fixed(10);  // process: valid traffic
  c.traffic.concurrency = concurrency;
  if (arrival) c.fields["traffic.arrival.rate"] = {};
  return c;
}

TEST(ClientLoadTest, TheOneRuleForCardAndFlags) {
  struct Case {
    std::optional<int> card_c;
    bool card_arrival;
    LoadOverrides flags;
    bool closed;
    int concurrency;
    const char* mode;
  };
  const Case cases[] = {
      {std::nullopt, true, {}, false, 0, "open_loop"},
      {8, false, {}, true, 8, "closed_loop"},             // concurrency, no arrival: closed loop
      {8, true, {}, false, 8, "open_loop_capped"},        // both in the card: capped open loop
      {8, true, {.rate_rps = 5, .concurrency = {}}, false, 0, "open_loop"},  // --rate alone: no cap
      {std::nullopt, true, {.rate_rps = {}, .concurrency = 4}, true, 4, "closed_loop"},
      {8, false, {.rate_rps = 5, .concurrency = 4}, false, 4, "open_loop_capped"},
  };
  for (const Case& k : cases) {
    auto l = ResolveClientLoad(CardWith(k.card_c, k.card_arrival), k.flags);
    ASSERT_TRUE(l.ok()) << l.status().ToString();
    EXPECT_EQ(l->closed_loop, k.closed) << k.mode;
    EXPECT_EQ(l->concurrency, k.concurrency) << k.mode;
    EXPECT_STREQ(l->ModeName(), k.mode);
    EXPECT_EQ(l->rate_rps.has_value(), k.flags.rate_rps.has_value());
  }
  EXPECT_FALSE(ResolveClientLoad(CardWith(std::nullopt, true), {.rate_rps = 0, .concurrency = {}}).ok());
  auto bad = ResolveClientLoad(CardWith(std::nullopt, true), {.rate_rps = {}, .concurrency = 0});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("--concurrency"), std::string::npos);
  EXPECT_FALSE(ResolveClientLoad(CardWith(0, false), {}).ok());  // a closed loop of nobody
}

// The flags get the card's limits (issue 10: `simulate --rate 1000000000` grew to GBs while
// the card refused the same rate). One check for bench, run, sweep, simulate and capacity.
TEST(ClientLoadTest, FlagsHaveTheCardsLimits) {
  const card::WorkloadCard c = CardWith(std::nullopt, true);
  EXPECT_TRUE(ResolveClientLoad(c, {.rate_rps = card::kMaxRateRps, .concurrency = card::kMaxConcurrency}).ok());
  auto rate = ResolveClientLoad(c, {.rate_rps = 1e12, .concurrency = {}});
  ASSERT_FALSE(rate.ok());
  EXPECT_EQ(rate.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(rate.status().message().find("--rate: must be <= 1e6"), std::string::npos) << rate.status().message();
  auto nan = ResolveClientLoad(c, {.rate_rps = std::numeric_limits<double>::quiet_NaN(), .concurrency = {}});
  EXPECT_FALSE(nan.ok());
  auto conc = ResolveClientLoad(c, {.rate_rps = {}, .concurrency = card::kMaxConcurrency + 1});
  ASSERT_FALSE(conc.ok());
  EXPECT_NE(conc.status().message().find("--concurrency: must be <= 1000000"), std::string::npos);
}

TEST(ClientLoadTest, RampedConcurrencyRisesExactlyWhenTheRampSaysSo) {
  for (int target : {1, 2, 7, 128}) {
    for (Nanos ramp : {Nanos{1000}, 3 * kNanosPerSecond, Nanos{999'999'937}}) {
      int limit = RampedConcurrency(target, 0, ramp);
      EXPECT_EQ(limit, 1);
      while (limit < target) {
        const Nanos t = RampedConcurrencyRisesAt(target, limit, ramp);
        ASSERT_LE(RampedConcurrency(target, t - 1, ramp), limit) << target << " " << ramp;
        ASSERT_GT(RampedConcurrency(target, t, ramp), limit) << target << " " << ramp;
        limit = RampedConcurrency(target, t, ramp);
      }
      EXPECT_LE(RampedConcurrencyRisesAt(target, 0, ramp), ramp);
      EXPECT_EQ(RampedConcurrencyRisesAt(target, target, ramp), std::numeric_limits<Nanos>::max());
    }
  }
}

TEST(ClientLoadTest, RampedOffsetNeverRunsAhead) {
  const Nanos r = 10 * kNanosPerSecond;
  for (Nanos a = 0; a < 3 * r; a += r / 7) EXPECT_GE(RampedOffset(a, r), a);
  EXPECT_EQ(RampedOffset(123, 0), 123);
}

// The rule returns the factor on the card's arrival process and the offered mean rate, so
// no caller probes the generator itself (bench, simulate and capacity each used to).
TEST(ClientLoadTest, RateBecomesAFactorOnTheCardsArrivalProcess) {
  card::WorkloadCard c = CardWith(std::nullopt, true);  // 10 rps
  c.traffic.arrival.kind = card::ArrivalSpec::Kind::kOnOff;
  c.traffic.arrival.on_s = 1;
  c.traffic.arrival.off_s = 3;  // mean 10 x 1/4 = 2.5 rps

  auto card_rate = ResolveClientLoad(c, {});
  ASSERT_TRUE(card_rate.ok()) << card_rate.status().ToString();
  EXPECT_EQ(card_rate->mode(), LoadMode::kOpenLoop);
  EXPECT_DOUBLE_EQ(card_rate->rate_scale, 1.0);
  EXPECT_DOUBLE_EQ(card_rate->mean_rate_rps, 2.5);

  auto at5 = ResolveClientLoad(c, {.rate_rps = 5, .concurrency = 3, .ramp = 7 * kNanosPerSecond});
  ASSERT_TRUE(at5.ok()) << at5.status().ToString();
  EXPECT_EQ(at5->mode(), LoadMode::kOpenLoopCapped);
  EXPECT_DOUBLE_EQ(at5->rate_scale, 2.0);  // 5 / 2.5
  EXPECT_DOUBLE_EQ(at5->mean_rate_rps, 5.0);
  EXPECT_EQ(at5->ramp, 7 * kNanosPerSecond);

  // --rate-scale multiplies the card's rate; an explicit rate stays absolute.
  auto scaled = ResolveClientLoad(c, {.rate_scale = 4});
  ASSERT_TRUE(scaled.ok());
  EXPECT_DOUBLE_EQ(scaled->rate_scale, 4.0);
  EXPECT_DOUBLE_EQ(scaled->mean_rate_rps, 10.0);
  auto absolute = ResolveClientLoad(c, {.rate_rps = 5, .rate_scale = 4});
  ASSERT_TRUE(absolute.ok());
  EXPECT_DOUBLE_EQ(absolute->rate_scale, 2.0);
  EXPECT_DOUBLE_EQ(absolute->mean_rate_rps, 5.0);

  auto closed = ResolveClientLoad(CardWith(4, false), {.ramp = kNanosPerSecond});
  ASSERT_TRUE(closed.ok());
  EXPECT_EQ(closed->mode(), LoadMode::kClosedLoop);
  EXPECT_EQ(closed->mean_rate_rps, 0);
  EXPECT_EQ(closed->ramp, kNanosPerSecond);
}

TEST(ClientLoadTest, BadRateScaleOrRampNamesTheFlag) {
  auto closed_scaled = ResolveClientLoad(CardWith(4, false), {.rate_scale = 2});
  ASSERT_FALSE(closed_scaled.ok());
  EXPECT_NE(closed_scaled.status().message().find("--rate-scale: a closed loop (concurrency 4)"), std::string::npos);
  auto ramp = ResolveClientLoad(CardWith(std::nullopt, true), {.ramp = -1});
  ASSERT_FALSE(ramp.ok());
  EXPECT_NE(ramp.status().message().find("--ramp"), std::string::npos);
  auto zero = ResolveClientLoad(CardWith(std::nullopt, true), {.rate_scale = 0});
  ASSERT_FALSE(zero.ok());
  EXPECT_NE(zero.status().message().find("--rate-scale"), std::string::npos);
}

}  // namespace
}  // namespace infereng::workload
