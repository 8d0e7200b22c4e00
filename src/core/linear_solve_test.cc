#include "core/linear_solve.h"

#include <gtest/gtest.h>

namespace infereng {
namespace {

TEST(SolveLinear, SolvesWithPivotingAndRefusesASingularSystem) {
  // A zero first pivot forces a row swap: x = (1, 2, 3).
  std::vector<double> x;
  ASSERT_TRUE(SolveLinear({{0, 1, 1}, {2, 0, 1}, {1, 1, 0}}, {5, 5, 3}, &x));
  ASSERT_EQ(x.size(), 3u);
  EXPECT_NEAR(x[0], 1, 1e-12);
  EXPECT_NEAR(x[1], 2, 1e-12);
  EXPECT_NEAR(x[2], 3, 1e-12);
  EXPECT_FALSE(SolveLinear({{1, 2}, {2, 4}}, {1, 2}, &x));
}

}  // namespace
}  // namespace infereng
