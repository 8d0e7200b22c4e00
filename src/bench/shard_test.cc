#include "bench/shard.h"

#include <map>

#include <gtest/gtest.h>

#include "card/card_parser.h"
#include "workload/generator.h"

namespace infereng::bench {
namespace {

TEST(ShardTest, ParsesKOverNFromZero) {
  auto s = ParseShard("2/4");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->k, 2);
  EXPECT_EQ(s->n, 4);
  for (const char* bad : {"4/4", "-1/4", "1/0", "1", "a/b", "1/2/3", "1/5000", ""}) {
    auto r = ParseShard(bad);
    EXPECT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find("--shard"), std::string::npos) << bad;
  }
}

TEST(ShardTest, UsersAndCountsSplitWithNothingLostOrDoubled) {
  for (int n : {1, 2, 3, 7}) {
    for (int total : {0, 1, 5, 64, 100}) {
      int users = 0;
      int64_t counted = 0;
      for (int k = 0; k < n; ++k) {
        users += ShardShare({.k = k, .n = n}, total);
        counted += ShardCount({.k = k, .n = n}, 13, total);
      }
      EXPECT_EQ(users, total) << n;
      EXPECT_EQ(counted, total) << n;
    }
  }
  // Indices 13..17 of shard 1/3: 13 and 16.
  EXPECT_EQ(ShardCount({.k = 1, .n = 3}, 13, 5), 2);
}

// The union of the shards' schedules is the unsharded schedule, request for request: the
// same indices, intended send times, lengths and seeds, each in exactly one shard.
TEST(ShardTest, UnionOfShardSchedulesIsTheUnshardedSchedule) {
  auto card = card::ParseCard(R"(name: s
traffic:
  arrival: {process: gamma, rate: 50rps, cv: 2}
  input_tokens: {lognormal: {p50: 200, p99: 2000}, max: 4000}
  output_tokens: {uniform: [10, 300]}
  prefix: {share: 0.5, tokens: 100, distinct: 3}
bench: {seed: 11}
)", "s.yaml");
  ASSERT_TRUE(card.ok()) << card.status().ToString();
  workload::GeneratorOptions go;
  go.seed = 11;
  go.max_requests = 500;
  std::map<uint64_t, workload::RequestSpec> one;
  {
    auto gen = workload::Generator::FromCard(*card, go);
    ASSERT_TRUE(gen.ok());
    while (auto s = gen->Next()) one[s->index] = *s;
  }
  ASSERT_EQ(one.size(), 500u);
  for (int n : {2, 3, 8}) {
    std::map<uint64_t, workload::RequestSpec> merged;
    for (int k = 0; k < n; ++k) {
      auto gen = workload::Generator::FromCard(*card, go);
      ASSERT_TRUE(gen.ok());
      while (auto s = NextInShard({.k = k, .n = n}, [&] { return gen->Next(); })) {
        EXPECT_EQ(s->index % static_cast<uint64_t>(n), static_cast<uint64_t>(k));
        EXPECT_TRUE(merged.emplace(s->index, *s).second) << "index " << s->index << " in two shards";
      }
    }
    ASSERT_EQ(merged.size(), one.size()) << n;
    for (const auto& [i, s] : one) {
      const workload::RequestSpec& m = merged.at(i);
      EXPECT_EQ(m.t_arrival, s.t_arrival) << i;
      EXPECT_EQ(m.input_tokens, s.input_tokens) << i;
      EXPECT_EQ(m.output_tokens, s.output_tokens) << i;
      EXPECT_EQ(m.prefix_id, s.prefix_id) << i;
      EXPECT_EQ(m.seed, s.seed) << i;
    }
  }
}

TEST(ShardTest, StartAtTakesUtcOrAnOffset) {
  auto t = ParseStartAt("2026-12-02T00:10:00Z", 0);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(*t, int64_t{1796170200} * 1'000'000'000);
  EXPECT_EQ(UnixNsIso8601(*t), "2026-12-02T00:10:00.000Z");
  EXPECT_EQ(*ParseStartAt("2026-12-02T00:10:00.250Z", 0) - *t, 250'000'000);
  EXPECT_EQ(*ParseStartAt("+30s", 5), 5 + int64_t{30'000'000'000});
  for (const char* bad : {"tomorrow", "2026-12-02 00:10", "2026-12-02T00:10:00", "+-3s", "+2d"}) {
    EXPECT_FALSE(ParseStartAt(bad, 0).ok()) << bad;
  }
}

}  // namespace
}  // namespace infereng::bench
