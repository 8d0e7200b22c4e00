// Transcription requests in a summary: counts and the real-time factor (E2E / audio) over the
// successful in-window requests, audio seconds per second over the window exactly as
// requests/s, absent when no record carried audio; the record's fields and the JSON block
// round-trip.
#include "metrics/audio_summary.h"

#include <gtest/gtest.h>

#include "metrics/records_io.h"
#include "metrics/summary.h"
#include "metrics/summary_json.h"
#include "metrics/test_records.h"

namespace infereng::metrics {
namespace {

using testdata::Rec;

// Sent at sched_ms, last chunk at end_ms: E2E = end - sched.
RequestRecord Clip(uint64_t id, double sched_ms, double end_ms, int32_t audio_ms, ErrorClass error = ErrorClass::kNone) {
  RequestRecord r = Rec(id, sched_ms, sched_ms, {{end_ms}}, end_ms, error);
  r.audio_ms = audio_ms;
  r.audio_tokens = audio_ms / 20;
  return r;
}

TEST(AudioSummaryTest, RealTimeFactorAndAudioPerSecondOverTheWindow) {
  AccumulatorOptions o;
  o.window_end = MillisToNanos(1000);
  const std::vector<RequestRecord> records = {
      Clip(0, 0, 50, 1000),                        // RTF 0.05
      Clip(1, 100, 150, 0),                        // no audio: not counted here
      Clip(2, 500, 700, 2000),                     // RTF 0.1
      Clip(3, 900, 1200, 3000),                    // RTF 0.1; ends after the window: not in the rate
      Clip(4, 950, 990, 4000, ErrorClass::kHttp5xx),  // failed: not counted
  };
  const Summary s = Summarize(records, o);
  ASSERT_TRUE(s.audio.has_value());
  const AudioSummary& a = *s.audio;
  EXPECT_EQ(a.requests, 3);
  EXPECT_DOUBLE_EQ(a.audio_s, 6.0);
  EXPECT_EQ(a.audio_tokens, 300);
  EXPECT_DOUBLE_EQ(a.window_audio_s, 3.0);
  ASSERT_GT(s.rate_basis_s, 0);
  EXPECT_DOUBLE_EQ(a.audio_s_per_s, 3.0 / s.rate_basis_s);
  EXPECT_EQ(a.rtf.count, 3);
  EXPECT_NEAR(a.rtf.min, 0.05, 1e-12);
  EXPECT_NEAR(a.rtf.max, 0.1, 1e-12);

  Result<Summary> back = SummaryFromJson(SummaryToJson(s));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_TRUE(back->audio.has_value());
  EXPECT_EQ(*back->audio, a);

  const Summary text = Summarize({Clip(0, 0, 50, 0)}, o);
  EXPECT_FALSE(text.audio.has_value());
  EXPECT_FALSE(SummaryToJson(text).contains("audio"));
}

TEST(AudioSummaryTest, RecordFieldsOnlyWhenAudioWasSent) {
  const nlohmann::json with = RecordToJson(Clip(7, 0, 10, 2500), 0);
  EXPECT_EQ(with["audio_ms"], 2500);
  EXPECT_EQ(with["audio_tokens"], 125);
  Result<RequestRecord> back = RecordFromJson(with);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->audio_ms, 2500);
  EXPECT_EQ(back->audio_tokens, 125);
  EXPECT_FALSE(RecordToJson(Clip(8, 0, 10, 0), 0).contains("audio_ms"));
  nlohmann::json bad = with;
  bad["audio_ms"] = -1;
  EXPECT_FALSE(RecordFromJson(bad).ok());
}

}  // namespace
}  // namespace infereng::metrics
