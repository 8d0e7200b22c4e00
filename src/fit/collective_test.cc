#include "fit/collective.h"

#include <gtest/gtest.h>

namespace infereng::fit {
namespace {

// Hand-computed from NCCL's NVLink LL figures (6.6 us base, 0.6 us per ring step).
TEST(Collective, AllReduceLatencyIsLaunchPlusHops) {
  EXPECT_DOUBLE_EQ(AllReduceLatencySeconds(1, 6.6e-6, 0.6e-6), 0);
  EXPECT_NEAR(AllReduceLatencySeconds(2, 6.6e-6, 0.6e-6), 7.8e-6, 1e-12);
  EXPECT_NEAR(AllReduceLatencySeconds(4, 6.6e-6, 0.6e-6), 10.2e-6, 1e-12);
  EXPECT_NEAR(AllReduceLatencySeconds(8, 6.6e-6, 0.6e-6), 15.0e-6, 1e-12);
}

// A ring within one node (2(n-1) steps), a tree beyond (2 ceil(log2 n)).
TEST(Collective, RingUpToOneNodeThenTree) {
  EXPECT_EQ(AllReduceHops(1), 0);
  EXPECT_EQ(AllReduceHops(2), 2);
  EXPECT_EQ(AllReduceHops(4), 6);
  EXPECT_EQ(AllReduceHops(8), 14);
  EXPECT_EQ(AllReduceHops(16), 8);
  EXPECT_EQ(AllReduceHops(12), 8);
  EXPECT_EQ(AllReduceHops(64), 12);
}

}  // namespace
}  // namespace infereng::fit
