// Requests with images in a summary: counts over the successful in-window requests, images/s
// over the window exactly as requests/s, absent when no record carried an image; the
// record's fields and the JSON block round-trip.
#include "metrics/vision_summary.h"

#include <gtest/gtest.h>

#include "metrics/records_io.h"
#include "metrics/summary.h"
#include "metrics/summary_json.h"
#include "metrics/test_records.h"

namespace infereng::metrics {
namespace {

using testdata::Rec;

RequestRecord Img(uint64_t id, double sched_ms, double end_ms, int32_t images, ErrorClass error = ErrorClass::kNone) {
  RequestRecord r = Rec(id, sched_ms, sched_ms, {{end_ms}}, end_ms, error);
  r.images = images;
  r.image_tokens = 576 * images;
  return r;
}

TEST(VisionSummaryTest, CountsAndImagesPerSecondOverTheWindow) {
  AccumulatorOptions o;
  o.window_end = MillisToNanos(1000);
  const std::vector<RequestRecord> records = {
      Img(0, 0, 50, 2),
      Img(1, 100, 150, 0),                         // no images: not counted here
      Img(2, 500, 560, 1),
      Img(3, 900, 1200, 3),                        // ends after the window: counted, not in the rate
      Img(4, 950, 990, 4, ErrorClass::kHttp5xx),   // failed: not counted
  };
  const Summary s = Summarize(records, o);
  ASSERT_TRUE(s.vision.has_value());
  const VisionSummary& v = *s.vision;
  EXPECT_EQ(v.requests, 3);
  EXPECT_EQ(v.images, 6);
  EXPECT_EQ(v.image_tokens, 6 * 576);
  EXPECT_EQ(v.window_images, 3);
  ASSERT_GT(s.rate_basis_s, 0);
  EXPECT_DOUBLE_EQ(v.images_per_s, 3 / s.rate_basis_s);

  Result<Summary> back = SummaryFromJson(SummaryToJson(s));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_TRUE(back->vision.has_value());
  EXPECT_EQ(*back->vision, v);

  const Summary text = Summarize({Img(0, 0, 50, 0)}, o);
  EXPECT_FALSE(text.vision.has_value());
  EXPECT_FALSE(SummaryToJson(text).contains("vision"));
}

TEST(VisionSummaryTest, RecordFieldsOnlyWhenImagesWereSent) {
  const nlohmann::json with = RecordToJson(Img(7, 0, 10, 2), 0);
  EXPECT_EQ(with["images"], 2);
  EXPECT_EQ(with["image_tokens"], 1152);
  Result<RequestRecord> back = RecordFromJson(with);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->images, 2);
  EXPECT_EQ(back->image_tokens, 1152);
  const nlohmann::json without = RecordToJson(Img(8, 0, 10, 0), 0);
  EXPECT_FALSE(without.contains("images"));
  EXPECT_FALSE(without.contains("image_tokens"));
}

}  // namespace
}  // namespace infereng::metrics
