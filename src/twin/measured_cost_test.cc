// The measured cost model's table against hand-computed values, and the profile file's
// errors naming the field.
#include "twin/measured_cost.h"

#include <gtest/gtest.h>

#include "twin/profile_file.h"

namespace infereng::twin {
namespace {

MeasuredTable Table() {
  MeasuredTable t;
  t.tokens = {{1, 8, 512}, {0.010, 0.012, 0.100}};
  t.context = {{0, 1000, 5000}, {0, 0.002, 0.004}};
  return t;
}

TEST(PiecewiseLinear, InterpolatesBetweenPointsAndExtendsTheEndSlope) {
  const PiecewiseLinear c{{1, 8, 512}, {0.010, 0.012, 0.100}};
  bool out = false;
  EXPECT_DOUBLE_EQ(c.At(1, &out), 0.010);
  EXPECT_DOUBLE_EQ(c.At(4.5, &out), 0.011);  // halfway 1..8
  EXPECT_DOUBLE_EQ(c.At(260, &out), 0.056);  // halfway 8..512: (0.012 + 0.100) / 2
  EXPECT_FALSE(out);
  // Beyond 512: the last segment's slope, 0.088 / 504 per token.
  EXPECT_NEAR(c.At(1016, &out), 0.100 + 0.088 / 504 * 504, 1e-12);
  EXPECT_TRUE(out);
  // A falling end segment is held flat, never extrapolated downwards.
  const PiecewiseLinear falling{{0, 10}, {0.2, 0.1}};
  EXPECT_DOUBLE_EQ(falling.At(100), 0.1);
}

TEST(MeasuredCostModel, AddsTheTokenAndContextTerms) {
  MeasuredCostModel m(Table());
  StepShape decode;
  decode.decode_seqs = 8;
  decode.decode_context = 3000;  // context(3000) = 0.002 + 0.5 * 0.002 = 0.003
  EXPECT_NEAR(m.StepSeconds(decode), 0.012 + 0.003, 1e-12);
  StepShape mixed;
  mixed.prefill_seqs = 1;
  mixed.prefill_tokens = 252;     // + 8 decode sequences: 260 new tokens -> 0.056
  mixed.decode_seqs = 8;
  mixed.decode_context = 500;     // + 500 prefill context: 1000 -> 0.002
  mixed.prefill_context = 500;
  EXPECT_NEAR(m.StepSeconds(mixed), 0.056 + 0.002, 1e-12);
  EXPECT_EQ(m.ExtrapolatedSteps(), 0);
  StepShape huge;
  huge.prefill_seqs = 1;
  huge.prefill_tokens = 4096;
  EXPECT_GT(m.StepSeconds(huge), 0.100);
  EXPECT_EQ(m.ExtrapolatedSteps(), 1);
  EXPECT_EQ(m.StepSeconds(StepShape{}), 0);
}

TEST(ProfileFile, RoundTripsAndNamesTheBadField) {
  ProfileFile p;
  p.table = Table();
  p.table.front_end_s = 0.004;
  p.points.push_back({"decode_batch", 8, 100, 8, 0.012, 1});
  p.kv_capacity_tokens = 4096;
  auto back = ProfileFromJson(ProfileToJson(p));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->table.tokens.x, p.table.tokens.x);
  EXPECT_DOUBLE_EQ(back->table.front_end_s, 0.004);
  EXPECT_EQ(back->kv_capacity_tokens, 4096);
  ASSERT_EQ(back->points.size(), 1u);

  nlohmann::json j = ProfileToJson(p);
  j["table"]["tokens"][2][0] = 4;  // not increasing
  auto bad = ProfileFromJson(j);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("table.tokens[2]"), std::string::npos) << bad.status().message();
  j = ProfileToJson(p);
  j["table"]["context"][1] = "fast";
  bad = ProfileFromJson(j);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("table.context[1]"), std::string::npos) << bad.status().message();
  j = ProfileToJson(p);
  j.erase("table");
  EXPECT_FALSE(ProfileFromJson(j).ok());
  j = ProfileToJson(p);
  j["schema"] = "something/2";
  EXPECT_FALSE(ProfileFromJson(j).ok());
}

}  // namespace
}  // namespace infereng::twin
