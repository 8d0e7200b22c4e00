#include "twin/router.h"

#include <gtest/gtest.h>

#include <vector>

#include "twin/autoscaler.h"
#include "twin/kv_cache.h"

namespace infereng::twin {
namespace {

TEST(RouterTest, RoundRobinSkipsReplicasThatDoNotAccept) {
  Router r(RouterPolicy::kRoundRobin);
  std::vector<ReplicaView> v = {{true, 0}, {false, 0}, {true, 0}};
  EXPECT_EQ(r.Pick(v, 0), 0);
  EXPECT_EQ(r.Pick(v, 0), 2);
  EXPECT_EQ(r.Pick(v, 0), 0);
  std::vector<ReplicaView> none = {{false, 0}};
  EXPECT_EQ(r.Pick(none, 0), -1);
}

TEST(RouterTest, LeastOutstandingPicksTheLeastLoaded) {
  Router r(RouterPolicy::kLeastOutstanding);
  std::vector<ReplicaView> v = {{true, 5}, {true, 2}, {false, 0}, {true, 3}};
  EXPECT_EQ(r.Pick(v, 0), 1);
}

TEST(RouterTest, PrefixAffinityIsStickyUntilOverloaded) {
  Router r(RouterPolicy::kPrefixAffinity);
  std::vector<ReplicaView> v(4, ReplicaView{true, 1});
  const int first = r.Pick(v, 42);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(r.Pick(v, 42), first);
  // Different keys spread over replicas.
  std::vector<int> seen(4, 0);
  for (uint64_t k = 1; k <= 200; ++k) ++seen[static_cast<size_t>(r.Pick(v, k))];
  for (int n : seen) EXPECT_GT(n, 20);
  // The sticky replica overloaded: fall back to the least loaded.
  v[static_cast<size_t>(first)].outstanding = 100;
  EXPECT_NE(r.Pick(v, 42), first);
}

TEST(AutoscalerTest, ScalesUpAtOnceAndDownAfterCooldown) {
  ClusterConfig c;
  c.autoscale = AutoscaleMetric::kInFlight;
  c.autoscale_target = 10;
  c.min_replicas = 1;
  c.max_replicas = 5;
  c.cooldown_s = 60;
  Autoscaler a(c);
  ScaleDecision up = a.Decide(SecondsToNanos(10), 35, 1, 0);
  EXPECT_EQ(up.start, 3);  // ceil(35 / 10) = 4 replicas
  EXPECT_EQ(a.Decide(SecondsToNanos(20), 500, 4, 0).start, 1);  // clamped to max 5
  EXPECT_EQ(a.Decide(SecondsToNanos(30), 0, 5, 0).drain, 0);    // cooldown
  EXPECT_EQ(a.Decide(SecondsToNanos(90), 0, 5, 0).drain, 4);    // down to min 1
  EXPECT_EQ(a.OnColdRequest(SecondsToNanos(91), 0, 0).start, 1);
  EXPECT_EQ(a.OnColdRequest(SecondsToNanos(91), 0, 1).start, 0);
}

TEST(KvBlockPoolTest, EvictsLeastRecentlyUsedChainTailsFirst) {
  KvBlockPool p(4);
  ASSERT_TRUE(p.Allocate(3));
  std::vector<int32_t> chain;
  for (uint64_t h : {11u, 12u, 13u}) chain.push_back(p.Register(h));
  EXPECT_EQ(p.private_used(), 0);
  EXPECT_EQ(p.cached(), 3);
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) p.Unref(*it);  // tail first, as the engine does
  EXPECT_EQ(p.Available(), 4);
  EXPECT_EQ(p.Usage(), 0);
  ASSERT_TRUE(p.Allocate(2));  // one free + one evicted: the chain's tail (13)
  std::vector<int32_t> slots;
  const uint64_t hashes[] = {11, 12, 13};
  EXPECT_EQ(p.Match(hashes, 3, slots), 2);  // 11 and 12 survive
  EXPECT_FALSE(p.Allocate(3));              // 2 private + 2 referenced = full
  EXPECT_EQ(p.free() + p.private_used() + p.cached(), p.total());
}

}  // namespace
}  // namespace infereng::twin
