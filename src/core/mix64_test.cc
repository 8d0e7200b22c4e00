#include "core/mix64.h"

#include <gtest/gtest.h>

namespace infereng {
namespace {

// Reference values of splitmix64 (Vigna's splitmix64.c: next() with state 0 returns
// Mix64(0), the next call Mix64(0x9e3779b97f4a7c15), ...). Every seeded stream and golden
// file rests on these bits.
TEST(Mix64, MatchesTheReferenceSplitmix64Sequence) {
  EXPECT_EQ(Mix64(0), 0xe220a8397b1dcdafULL);
  EXPECT_EQ(Mix64(0x9e3779b97f4a7c15ULL), 0x6e789e6aa1b965f4ULL);
  EXPECT_EQ(Mix64(2 * 0x9e3779b97f4a7c15ULL), 0x06c45d188009454fULL);
  static_assert(Mix64(0) == 0xe220a8397b1dcdafULL, "usable in constant expressions");
}

}  // namespace
}  // namespace infereng
