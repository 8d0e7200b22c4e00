// The autoscaler's replica target on extreme inputs: a deep queue over a tiny per-replica
// target used to overflow the int32_t it was cast to (undefined behaviour); it is clamped to
// the cluster's bounds instead.
#include "twin/autoscaler.h"

#include <gtest/gtest.h>

#include <cmath>

namespace infereng::twin {
namespace {

ClusterConfig Config() {
  ClusterConfig c;
  c.autoscale = AutoscaleMetric::kQueueDepth;
  c.autoscale_target = 1e-9;
  c.min_replicas = 1;
  c.max_replicas = 16;
  c.cooldown_s = 0;
  return c;
}

TEST(AutoscalerTest, HugeDemandIsClampedToMaxReplicas) {
  Autoscaler a(Config());
  ScaleDecision d = a.Decide(0, 1e6, 1, 0);  // 1e15 replicas wanted
  EXPECT_EQ(d.start, 15);
  Autoscaler b(Config());
  EXPECT_EQ(b.Decide(0, std::nan(""), 4, 0).start, 0) << "NaN demand scales nothing up";
}

}  // namespace
}  // namespace infereng::twin
