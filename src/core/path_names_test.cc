#include "core/path_names.h"

#include <gtest/gtest.h>

namespace infereng {
namespace {

TEST(SafePathComponentTest, KeepsOrdinaryNames) {
  EXPECT_EQ(SafePathComponent("chat-8b_v2.1", "run"), "chat-8b_v2.1");
}

TEST(SafePathComponentTest, NoTraversalOrSeparators) {
  // The name: without the fix, sweep wrote to sweep-x/../../../../outside.
  const std::string s = SafePathComponent("x/../../../../outside", "card");
  EXPECT_EQ(s.find('/'), std::string::npos);
  EXPECT_EQ(s, "x-..-..-..-..-outside");  // one component, however many dots it keeps
  EXPECT_EQ(SafePathComponent("..", "card"), "card");
  EXPECT_EQ(SafePathComponent(".", "card"), "card");
  EXPECT_EQ(SafePathComponent("../up", "card"), "-.-up");
  EXPECT_EQ(SafePathComponent("...", "card"), "card");
  EXPECT_EQ(SafePathComponent(".hidden", "card"), "-hidden");
  EXPECT_EQ(SafePathComponent("a\\b", "card"), "a-b");
  EXPECT_EQ(SafePathComponent(std::string_view("a\nb\0c", 5), "card"), "a-b-c");
  EXPECT_EQ(SafePathComponent("", "run"), "run");
  EXPECT_EQ(SafePathComponent("///", "run"), "run");
}

TEST(SafePathComponentTest, CutsLongNames) {
  EXPECT_EQ(SafePathComponent(std::string(5000, 'a'), "run").size(), kMaxPathComponent);
}

TEST(CheckPathComponentTest, RejectsWhatSafePathComponentWouldRepair) {
  EXPECT_TRUE(CheckPathComponent("chat-8b").ok());
  EXPECT_TRUE(CheckPathComponent("Llama 3.1 chat").ok());  // spaces are replaced, not refused
  EXPECT_TRUE(CheckPathComponent("").ok());
  EXPECT_NE(CheckPathComponent("x/../../outside").message().find("path separator '/'"), std::string::npos);
  EXPECT_NE(CheckPathComponent("a\\b").message().find("path separator '\\'"), std::string::npos);
  EXPECT_NE(CheckPathComponent("..").message().find("directory reference"), std::string::npos);
  EXPECT_NE(CheckPathComponent("a\tb").message().find("0x09"), std::string::npos);
  EXPECT_FALSE(CheckPathComponent(std::string(101, 'a')).ok());
}

TEST(CheckRelativePathInsideTest, OnlyPathsThatStayInside) {
  EXPECT_TRUE(CheckRelativePathInside("points/03-8").ok());
  EXPECT_TRUE(CheckRelativePathInside("trial-1").ok());
  EXPECT_FALSE(CheckRelativePathInside("").ok());
  EXPECT_FALSE(CheckRelativePathInside("/etc").ok());
  EXPECT_FALSE(CheckRelativePathInside("points/../../outside").ok());
  EXPECT_FALSE(CheckRelativePathInside("..").ok());
  EXPECT_FALSE(CheckRelativePathInside("points/a\\b").ok());
  EXPECT_FALSE(CheckRelativePathInside(std::string_view("points/a\nb")).ok());
}

}  // namespace
}  // namespace infereng
