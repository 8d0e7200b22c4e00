// The sweep's terminal table and progress line: numbers as people read them.
#include "sweep/sweep_io.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace infereng::sweep {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

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
