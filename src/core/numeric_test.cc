#include "core/numeric.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

namespace infereng {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

TEST(DoubleToInt64Test, WholeNumbersInRange) {
  EXPECT_EQ(DoubleToInt64(0.0), 0);
  EXPECT_EQ(DoubleToInt64(-0.0), 0);
  EXPECT_EQ(DoubleToInt64(42.0), 42);
  EXPECT_EQ(DoubleToInt64(-7.0), -7);
  EXPECT_EQ(DoubleToInt64(1e15), 1'000'000'000'000'000);
  EXPECT_EQ(DoubleToInt64(-0x1p63), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(DoubleToInt64(0x1p63 - 1024), int64_t{0x7ffffffffffffc00});  // largest double below 2^63
}

// fuzz/regressions/http_request/max-tokens-huge: 2^64 reached a bare cast (UB).
TEST(DoubleToInt64Test, OutOfRangeIsRefusedNotCast) {
  EXPECT_EQ(DoubleToInt64(18446744073709551616.0), std::nullopt);
  EXPECT_EQ(DoubleToInt64(0x1p63), std::nullopt);  // == (double)INT64_MAX, one past the end
  EXPECT_EQ(DoubleToInt64(-0x1p63 - 2048), std::nullopt);
  EXPECT_EQ(DoubleToInt64(1e300), std::nullopt);
  EXPECT_EQ(DoubleToInt64(-1e300), std::nullopt);
  EXPECT_EQ(DoubleToInt64(kInf), std::nullopt);
  EXPECT_EQ(DoubleToInt64(-kInf), std::nullopt);
  EXPECT_EQ(DoubleToInt64(kNaN), std::nullopt);
}

TEST(DoubleToInt64Test, FractionsAreRefused) {
  EXPECT_EQ(DoubleToInt64(0.5), std::nullopt);
  EXPECT_EQ(DoubleToInt64(-1.25), std::nullopt);
  EXPECT_EQ(DoubleToInt64(1e-300), std::nullopt);
}

TEST(RoundToInt64Test, RoundsHalvesAwayFromZero) {
  EXPECT_EQ(RoundToInt64(2.5), 3);
  EXPECT_EQ(RoundToInt64(-2.5), -3);
  EXPECT_EQ(RoundToInt64(2.4999), 2);
  EXPECT_EQ(RoundToInt64(1.5e6 * 1e3), 1'500'000'000);
}

TEST(RoundToInt64Test, OutOfRangeIsRefused) {
  EXPECT_EQ(RoundToInt64(0x1p63), std::nullopt);
  EXPECT_EQ(RoundToInt64(9.3e18), std::nullopt);
  EXPECT_EQ(RoundToInt64(-1e19), std::nullopt);
  EXPECT_EQ(RoundToInt64(kInf), std::nullopt);
  EXPECT_EQ(RoundToInt64(kNaN), std::nullopt);
  EXPECT_EQ(RoundToInt64(-0x1p63), std::numeric_limits<int64_t>::min());
}

TEST(InRangeTest, Bounds) {
  EXPECT_EQ(InRange(5, 1, 10), 5);
  EXPECT_EQ(InRange(1, 1, 10), 1);
  EXPECT_EQ(InRange(10, 1, 10), 10);
  EXPECT_EQ(InRange(0, 1, 10), std::nullopt);
  EXPECT_EQ(InRange(11, 1, 10), std::nullopt);
  EXPECT_EQ(InRange(std::nullopt, 1, 10), std::nullopt);
  EXPECT_EQ(InRange(DoubleToInt64(3e9), 1, INT32_MAX), std::nullopt);
}

}  // namespace
}  // namespace infereng
