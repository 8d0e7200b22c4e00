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

TEST(ClosestMatchTest, TyposPrefixesAndNothingClose) {
  const std::vector<std::string> names = {"h100-sxm", "h100-pcie", "l40s", "a100-80gb"};
  EXPECT_EQ(ClosestMatch("h100-sxn", names), "h100-sxm");
  EXPECT_EQ(ClosestMatch("H100-SXM5", names), "h100-sxm");  // case-insensitive
  EXPECT_EQ(ClosestMatch("h100", names), "h100-sxm");       // a prefix
  EXPECT_EQ(ClosestMatch("tpu-v5e", names), "");
  EXPECT_EQ(ClosestMatch("", names), "");
  EXPECT_EQ(DidYouMean("l40", names), " (did you mean \"l40s\"?)");
  EXPECT_EQ(DidYouMean("zzzzzzzz", names), "");
}

}  // namespace
}  // namespace infereng
