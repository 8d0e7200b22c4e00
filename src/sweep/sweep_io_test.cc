// sweep.json reading (whole-number counts) and the sweep's terminal table and progress line.
#include "sweep/sweep_io.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

namespace infereng::sweep {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

Result<SweepPoint> Point(const std::string& extra) {
  return PointFromJson(json::parse(R"({"load":2)" + extra + "}"), "points[0]");
}

TEST(SweepIo, CountsReadAsWholeNumbers) {
  auto p = Point(R"(,"requests":120,"errors":3.0,"ttft_ms":{"p50":1,"p90":2,"p99":3,"count":9223372036854775807})");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->requests, 120);
  EXPECT_EQ(p->errors, 3);
  EXPECT_EQ(p->ttft_ms.count, INT64_MAX);
}

// A count beyond int64 (or a fraction) was cast from double to int64_t: undefined
// behaviour for 1e300 or 2^64. It is a named error now.
TEST(SweepIo, CountsBeyondInt64OrFractionalAreErrors) {
  for (const char* bad : {R"(,"requests":1e300)", R"(,"errors":18446744073709551616)",
                          R"(,"requests":9223372036854775808)", R"(,"requests":2.5)", R"(,"requests":"7")",
                          R"(,"itl_ms":{"count":-1e19})"}) {
    auto p = Point(bad);
    ASSERT_FALSE(p.ok()) << bad;
    EXPECT_NE(p.status().message().find("expected a whole number"), std::string::npos) << p.status().ToString();
    EXPECT_NE(p.status().message().find("points[0]."), std::string::npos) << p.status().ToString();
  }
}

// Large throughputs used to print as "1.235e+04" (fmt's {:.4g}).
TEST(SweepTableTest, NumbersNeverUseScientificNotation) {
  SweepResult r;
  SweepPoint p;
  p.load = 20000;
  p.throughput_rps = 12345.6;
  p.output_tok_s = 1234567;
  p.goodput_rps = 12000;
  p.attainment = 1;
  p.ttft_ms = Latency{.p50 = 10, .p90 = 20, .p99 = 31250.5, .count = 100};
  r.points.push_back(p);
  r.max_throughput_rps = p.throughput_rps;
  r.saturation_load = 20000;
  const std::string table = FormatSweepTable(r);
  EXPECT_THAT(table, Not(HasSubstr("e+")));
  EXPECT_THAT(table, HasSubstr("1234567"));
  EXPECT_THAT(table, HasSubstr("12346"));  // 3 significant digits, no exponent
  EXPECT_THAT(table, HasSubstr("Saturation: at 20000 req/s"));
  const std::string line = FormatPointLine(p, LoadKind::kRate);
  EXPECT_THAT(line, Not(HasSubstr("e+")));
  EXPECT_THAT(line, HasSubstr("1234567 tok/s"));
}

}  // namespace
}  // namespace infereng::sweep
