#include "core/strings.h"

#include <gtest/gtest.h>

namespace infereng {
namespace {

TEST(EditDistanceTest, KnownAnswers) {
  EXPECT_EQ(EditDistance("", ""), 0u);
  EXPECT_EQ(EditDistance("abc", ""), 3u);
  EXPECT_EQ(EditDistance("", "abc"), 3u);
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3u);
  EXPECT_EQ(EditDistance("verison", "version"), 2u);
  EXPECT_EQ(EditDistance("fit", "fit"), 0u);
}

}  // namespace
}  // namespace infereng
