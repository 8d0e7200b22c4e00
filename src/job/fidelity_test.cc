// Fidelity rows on hand-made summaries: error sign and size, the seed band, rows left out
// when a side has no samples, the median, and the low-confidence flag.
#include "job/fidelity.h"

#include <gtest/gtest.h>

namespace infereng::job {
namespace {

metrics::Summary With(double ttft_p50, double ttft_p99, double tokens_per_s) {
  metrics::Summary s;
  s.ttft_ms.count = 100;
  s.ttft_ms.p50 = ttft_p50;
  s.ttft_ms.p90 = ttft_p50;
  s.ttft_ms.p99 = ttft_p99;
  s.output_tokens_per_s = tokens_per_s;
  return s;
}

TEST(FidelityTest, ErrorsBandAndMedian) {
  const metrics::Summary measured = With(100, 400, 1000);
  const std::vector<metrics::Summary> predicted = {With(90, 500, 1100), With(110, 480, 1050), With(95, 520, 1080)};
  Fidelity f = CompareWithPrediction(measured, predicted, false, "");
  ASSERT_EQ(f.rows.size(), 4u) << "TTFT P50/P90/P99 and throughput; TPOT/ITL/E2E/goodput have no samples";
  EXPECT_EQ(f.rows[0].metric, "ttft_ms");
  EXPECT_EQ(f.rows[0].stat, "p50");
  EXPECT_DOUBLE_EQ(f.rows[0].error, -0.1);
  EXPECT_DOUBLE_EQ(f.rows[0].band_lo, 90);
  EXPECT_DOUBLE_EQ(f.rows[0].band_hi, 110);
  EXPECT_TRUE(f.rows[0].within_band);
  EXPECT_DOUBLE_EQ(f.rows[2].error, 0.25);  // P99: 500 vs 400
  EXPECT_FALSE(f.rows[2].within_band);      // 400 is below the band [480, 520]
  EXPECT_EQ(f.rows[3].metric, "output_tokens_per_s");
  EXPECT_DOUBLE_EQ(f.rows[3].error, 0.1);
  // |errors| 0.1, 0.1 (P90), 0.25, 0.1: median 0.1.
  EXPECT_DOUBLE_EQ(f.median_abs_error, 0.1);
  EXPECT_FALSE(f.low_confidence);
  const std::string line = FidelityLine(f);
  EXPECT_NE(line.find("TTFT P50 -10%~ P99 +25%"), std::string::npos) << line;
  EXPECT_NE(line.find("throughput +10%"), std::string::npos) << line;
  EXPECT_EQ(FidelityToJson(f)["rows"].size(), 4u);
}

TEST(FidelityTest, SaturatedPredictionIsLowConfidence) {
  Fidelity f = CompareWithPrediction(With(100, 400, 1000), {With(100, 400, 1000)}, true, "queue still growing");
  EXPECT_TRUE(f.low_confidence);
  EXPECT_NE(f.note.find("queue still growing"), std::string::npos);
  EXPECT_NE(FidelityLine(f).find("low confidence"), std::string::npos);
  EXPECT_TRUE(CompareWithPrediction(With(100, 400, 1000), {}, false, "").rows.empty());
}

}  // namespace
}  // namespace infereng::job
