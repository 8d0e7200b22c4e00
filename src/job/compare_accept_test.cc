// Acceptance expressions: what parses, what it means, and errors that name the expression
// and the column.
#include "job/compare_accept.h"

#include <gtest/gtest.h>

namespace infereng::job {
namespace {

TEST(CompareAcceptTest, ParsesRelativeAndAbsoluteBounds) {
  auto e = ParseAcceptExpr("ttft_ms.p99<=-10%");
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->metric, "ttft_ms.p99");
  EXPECT_EQ(e->op, AcceptExpr::Op::kLe);
  EXPECT_TRUE(e->relative);
  EXPECT_DOUBLE_EQ(e->value, -0.10);

  e = ParseAcceptExpr(" e2e_ms.mean < +0.5s ");
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->op, AcceptExpr::Op::kLt);
  EXPECT_FALSE(e->relative);
  EXPECT_DOUBLE_EQ(e->value, 500);

  e = ParseAcceptExpr("goodput_rps >= 0");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->metric, "goodput_rps");
  EXPECT_EQ(e->op, AcceptExpr::Op::kGe);
  EXPECT_DOUBLE_EQ(e->value, 0);

  e = ParseAcceptExpr("error_rate<=+0.5pp");
  ASSERT_TRUE(e.ok());
  EXPECT_DOUBLE_EQ(e->value, 0.005);
  e = ParseAcceptExpr("itl_ms.p50>2ms");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->op, AcceptExpr::Op::kGt);
}

TEST(CompareAcceptTest, ErrorsNameTheExpressionAndColumn) {
  struct Case {
    const char* text;
    const char* expect;
  } cases[] = {
      {"", "column 1: expected a metric name"},
      {"ttft.p99<=1", "column 1: unknown metric 'ttft'"},
      {"ttft_ms<=-10%", "column 8: 'ttft_ms' needs a statistic"},
      {"ttft_ms.p42<=1", "column 9: unknown statistic 'p42'"},
      {"goodput_rps.p99>=0", "column 13: 'goodput_rps' is a single figure"},
      {"ttft_ms.p99=<5", "column 12: expected <=, <, >= or >"},
      {"ttft_ms.p99<=", "column 14: expected a number"},
      {"ttft_ms.p99<=--5", "column 15: expected a number (one sign at most)"},
      {"ttft_ms.p99<=5x", "column 15: unknown unit 'x'"},
      {"goodput_rps>=5ms", "column 15: 'goodput_rps' is not a latency"},
      {"ttft_ms.p99<=5pp", "column 15: pp (percentage points)"},
      {"ttft_ms.p99<=5 ms", "column 16: unexpected text after the value"},
  };
  for (const Case& c : cases) {
    auto e = ParseAcceptExpr(c.text);
    ASSERT_FALSE(e.ok()) << c.text;
    EXPECT_EQ(e.status().code(), Status::Code::kInvalidArgument);
    EXPECT_NE(e.status().message().find(std::string("--accept '") + c.text + "'"), std::string::npos) << e.status().message();
    EXPECT_NE(e.status().message().find(c.expect), std::string::npos) << c.text << " -> " << e.status().message();
  }
  auto several = ParseAcceptExprs({"goodput_rps>=0", "bogus<1"});
  ASSERT_FALSE(several.ok());
  EXPECT_NE(several.status().message().find("bogus"), std::string::npos);
}

TEST(CompareAcceptTest, HoldsFollowsTheOperator) {
  EXPECT_TRUE(Holds(AcceptExpr::Op::kLe, -0.1, -0.1));
  EXPECT_FALSE(Holds(AcceptExpr::Op::kLt, -0.1, -0.1));
  EXPECT_TRUE(Holds(AcceptExpr::Op::kGe, 0, 0));
  EXPECT_FALSE(Holds(AcceptExpr::Op::kGt, 0, 0));
}

}  // namespace
}  // namespace infereng::job
