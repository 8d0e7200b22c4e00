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

// A table measured from batch-1 prefills of an engine whose step costs 3 ms + 0.4 ms per
// token + 1 us per attention pair: tokens(n) = a + b n + g n^2 / 2 exactly.
MeasuredTable QuadraticTable() {
  MeasuredTable t;
  for (double x : {1.0, 2.0, 4.0, 128.0, 256.0, 512.0, 1024.0}) {
    t.tokens.x.push_back(x);
    t.tokens.y.push_back(0.003 + 0.0004 * x + 1e-6 * x * x / 2);
  }
  t.context = {{0, 1000}, {0, 0.002}};
  return t;
}

StepShape Chunks(int count, int64_t tokens, int64_t held) {
  StepShape s{.prefill_attn_pairs = 0};
  for (int i = 0; i < count; ++i) {
    ++s.prefill_seqs;
    s.prefill_tokens += tokens;
    s.prefill_context += held;
    s.prefill_attn_pairs += static_cast<double>(tokens) * (static_cast<double>(held) + 0.5 * tokens);
  }
  return s;
}

TEST(MeasuredCostModel, FitsTheCurvesAttentionRate) {
  const PrefillAttentionFit fit = FitPrefillAttention(QuadraticTable().tokens);
  ASSERT_TRUE(fit.ok);
  EXPECT_NEAR(fit.a, 0.003, 1e-9);
  EXPECT_NEAR(fit.b, 0.0004, 1e-11);
  EXPECT_NEAR(fit.g, 1e-6, 1e-13);
  // Concave (a GPU's batching) or too few points: no attention term is claimed.
  EXPECT_FALSE(FitPrefillAttention(Table().tokens).ok);
  EXPECT_FALSE(FitPrefillAttention(PiecewiseLinear{{1, 512}, {0.01, 0.1}}).ok);
}

// Four 256-token prompts in one step attend 4 x 256^2 / 2 pairs, not the 1,024^2 / 2 of one
// 1,024-token prompt the curve measured (issue 13: the llama.cpp knee).
TEST(MeasuredCostModel, PricesBatchedPromptsByTheirOwnAttentionPairs) {
  MeasuredCostModel m(QuadraticTable());
  // One fresh prompt: exactly the measured curve.
  EXPECT_NEAR(m.StepSeconds(Chunks(1, 256, 0)), 0.003 + 0.0004 * 256 + 1e-6 * 256 * 256 / 2, 1e-9);
  // Four: the linear work of 1,024 tokens plus four prompts' attention.
  EXPECT_NEAR(m.StepSeconds(Chunks(4, 256, 0)), 0.003 + 0.0004 * 1024 + 1e-6 * 4 * 256 * 256 / 2, 1e-9);
  // A chunk over 512 cached tokens: + g p h (its queries against the held keys).
  EXPECT_NEAR(m.StepSeconds(Chunks(1, 256, 512)),
              0.003 + 0.0004 * 256 + 1e-6 * 256 * 256 / 2 + 1e-6 * 256 * 512, 1e-9);
  // Decodes beside the chunk still read their context through the context curve.
  StepShape mixed = Chunks(1, 256, 0);
  mixed.decode_seqs = 4;
  mixed.decode_context = 500;  // context(500) = 0.001
  EXPECT_NEAR(m.StepSeconds(mixed), m.table().tokens.At(260) + 0.001, 1e-9);
  // Without pairs (the -1 estimate marker) or a fitted rate: the curves as before.
  StepShape unknown = Chunks(4, 256, 0);
  unknown.prefill_attn_pairs = -1;
  EXPECT_NEAR(m.StepSeconds(unknown), 0.003 + 0.0004 * 1024 + 1e-6 * 1024 * 1024 / 2, 1e-9);
  MeasuredCostModel concave(Table());
  StepShape four = Chunks(4, 64, 0);
  EXPECT_NEAR(concave.StepSeconds(four), concave.table().tokens.At(256), 1e-9);
  EXPECT_EQ(m.ExtrapolatedSteps(), 0);
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

// Step time over (batch tokens, occupancy): rows at 0 and 1,000 cells held.
OccupancyTable Grid() {
  return {.batch_tokens = {1, 100, 300}, .kv_occupied = {0, 1000}, .seconds = {{0.010, 0.100, 0.200}, {0.030, 0.150, 0.350}}};
}

TEST(OccupancyTable, BilinearInsideEndSlopesOutside) {
  const OccupancyTable g = Grid();
  bool out = false;
  EXPECT_DOUBLE_EQ(g.At(1, 0, &out), 0.010);
  EXPECT_DOUBLE_EQ(g.At(300, 1000, &out), 0.350);
  // (200 tokens, 500 cells): rows at 200 tokens are 0.150 and 0.250; halfway: 0.200.
  EXPECT_DOUBLE_EQ(g.At(200, 500, &out), 0.200);
  EXPECT_FALSE(out);
  // 2,000 cells: the occupancy segment's slope continues (0.150 + 0.050 at 100 tokens).
  EXPECT_NEAR(g.At(100, 2000, &out), 0.200, 1e-12);
  EXPECT_TRUE(out);
  // 500 tokens at 0 cells: the last token segment's slope (0.100 / 200 per token).
  EXPECT_NEAR(g.At(500, 0), 0.300, 1e-12);
  // A row falling with occupancy never extrapolates downwards.
  const OccupancyTable falling{.batch_tokens = {1}, .kv_occupied = {0, 10}, .seconds = {{0.2}, {0.1}}};
  EXPECT_DOUBLE_EQ(falling.At(1, 100), 0.1);
  const OccupancyTable one{.batch_tokens = {1, 2}, .kv_occupied = {0}, .seconds = {{0.1, 0.2}}};
  EXPECT_DOUBLE_EQ(one.At(2, 5000), 0.2);
}

TEST(MeasuredCostModel, TheOccupancyTablePricesStepsByTheCellsHeld) {
  MeasuredTable t = Table();
  t.occupancy = Grid();
  MeasuredCostModel m(t);
  StepShape decode{.decode_seqs = 1, .decode_context = 100};
  // The paged engine reports no occupancy: its own context + new tokens stand in (101).
  EXPECT_NEAR(m.StepSeconds(decode), 0.010 + 0.101 * 0.020, 1e-12);
  decode.kv_occupied_tokens = 1000;  // idle slots' cells: the second row
  EXPECT_NEAR(m.StepSeconds(decode), 0.030, 1e-12);
  EXPECT_EQ(m.ExtrapolatedSteps(), 0);
  // Without the table, occupancy changes nothing (old profiles price steps as before).
  MeasuredCostModel old(Table());
  StepShape held = decode;
  held.kv_occupied_tokens = 0;
  EXPECT_DOUBLE_EQ(old.StepSeconds(decode), old.StepSeconds(held));
}

// A step of several decoding sequences: the grid prices one of them (with any prompt
// tokens), the decode-batch curve the others. Table(): tokens(1) 0.010, tokens(8) 0.012.
TEST(MeasuredCostModel, DecodingSequencesBeyondTheFirstCostTheDecodeBatchIncrement) {
  MeasuredTable t = Table();
  t.occupancy = Grid();
  MeasuredCostModel m(t);
  StepShape eight{.decode_seqs = 8, .decode_context = 800, .kv_occupied_tokens = 1000};
  EXPECT_NEAR(m.StepSeconds(eight), 0.030 + (0.012 - 0.010), 1e-12);  // not the grid at 8 tokens (0.0385)
  StepShape mixed = eight;  // + a 99-token prompt chunk: the grid at 100 tokens, 1,000 cells
  mixed.prefill_seqs = 1;
  mixed.prefill_tokens = 99;
  EXPECT_NEAR(m.StepSeconds(mixed), 0.150 + 0.002, 1e-12);
  StepShape one{.decode_seqs = 1, .decode_context = 100, .kv_occupied_tokens = 1000};
  EXPECT_NEAR(m.StepSeconds(one), 0.030, 1e-12);  // one sequence: the grid alone, as before
}

TEST(ProfileFile, TheOccupancyTableRoundTripsAndOldProfilesLoadUnchanged) {
  ProfileFile p;
  p.table = Table();
  p.table.occupancy = Grid();
  p.points.push_back({.kind = "occupancy", .new_tokens = 1, .batch = 1, .seconds = 0.03, .repeats = 3,
                      .kv_occupied_tokens = 1000});
  const nlohmann::json j = ProfileToJson(p);
  auto back = ProfileFromJson(j);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->table.occupancy.seconds, p.table.occupancy.seconds);
  EXPECT_EQ(back->points[0].kv_occupied_tokens, 1000);
  EXPECT_NEAR(TableRelativeErrors(back->table, back->points)[0], 0, 1e-12);

  nlohmann::json bad = j;
  bad["table"]["occupancy"]["seconds"][1] = {0.1, 0.2};
  auto r = ProfileFromJson(bad);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("table.occupancy.seconds[1]: expected one value per batch_tokens value (3)"),
            std::string::npos)
      << r.status().message();
  bad = j;
  bad["table"]["occupancy"]["kv_occupied"] = {0, 0};
  r = ProfileFromJson(bad);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("table.occupancy.kv_occupied[1]"), std::string::npos) << r.status().message();
  // Only the table: table.tokens may be left out.
  bad = j;
  bad["table"].erase("tokens");
  EXPECT_TRUE(ProfileFromJson(bad).ok());

  // A profile written before the occupancy table (schema infereng.profile/1, no
  // "occupancy", no kv_occupied_tokens) loads and prices as before.
  const nlohmann::json old = nlohmann::json::parse(R"({"schema": "infereng.profile/1",
      "measurements": [{"kind": "prefill", "new_tokens": 100, "context_tokens": 0, "batch": 1, "seconds": 0.05}],
      "table": {"tokens": [[1, 0.01], [512, 0.1]], "context": [[0, 0], [1000, 0.002]], "front_end_s": 0.004}})");
  auto loaded = ProfileFromJson(old);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_TRUE(loaded->table.occupancy.empty());
  EXPECT_EQ(loaded->points[0].kv_occupied_tokens, 0);
  EXPECT_FALSE(ProfileToJson(*loaded)["table"].contains("occupancy"));
}

}  // namespace
}  // namespace infereng::twin
