#include "core/clock.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace infereng {
namespace {

TEST(ClockTest, SecondsToNanosConvertsInRange) {
  EXPECT_EQ(SecondsToNanos(1.5), 1'500'000'000);
  EXPECT_EQ(SecondsToNanos(-2), -2'000'000'000);
  EXPECT_EQ(MillisToNanos(0.25), 250'000);
}

// Outside Nanos' range the plain cast was undefined behaviour (UBSan float-cast-overflow);
// now the result saturates and NaN maps to 0.
TEST(ClockTest, SecondsToNanosSaturatesOutsideTheRange) {
  EXPECT_EQ(SecondsToNanos(1e300), INT64_MAX);
  EXPECT_EQ(SecondsToNanos(-1e300), INT64_MIN);
  EXPECT_EQ(SecondsToNanos(std::numeric_limits<double>::infinity()), INT64_MAX);
  EXPECT_EQ(SecondsToNanos(std::nan("")), 0);
  EXPECT_EQ(MillisToNanos(1e20), INT64_MAX);
  EXPECT_EQ(SecondsToNanos(9.1e9), static_cast<Nanos>(9.1e18));
}

}  // namespace
}  // namespace infereng
