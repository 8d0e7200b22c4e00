// llama.cpp GET /slots -> slot signals, on the real b4748 captures (testdata/llamacpp-b4748/).
#include "client/llamacpp_slots.h"

#include <gtest/gtest.h>

#include "client/test_fixture.h"

namespace infereng::client {
namespace {

TEST(LlamaCppSlots, IdleCaptureHasEightIdleSlots) {
  testing::CapturedResponse cap = testing::LoadCapture("slots_idle.txt");
  Result<SlotsSnapshot> s = ParseLlamaCppSlots(cap.body);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->total, 8);  // -np 8
  EXPECT_EQ(s->busy, 0);
  EXPECT_EQ(s->idle, 8);
  EXPECT_EQ(s->n_ctx, 4096);  // -c 32768 / 8 slots
  EXPECT_EQ(s->decoded_busy, 0);
  EXPECT_EQ(s->remaining_busy, 0);  // n_remain -1 (no limit) is not counted
}

TEST(LlamaCppSlots, BusyCaptureCountsOnlyTheProcessingSlot) {
  testing::CapturedResponse cap = testing::LoadCapture("slots_busy.txt");
  Result<SlotsSnapshot> s = ParseLlamaCppSlots(cap.body);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->total, 8);
  EXPECT_EQ(s->busy, 1);  // slot 2
  EXPECT_EQ(s->idle, 7);
  // Slot 2: n_decoded 22, n_remain 26 of max_tokens 48; the idle slots' leftover counts
  // (128 decoded by finished requests) are not work in flight.
  EXPECT_EQ(s->decoded_busy, 22);
  EXPECT_EQ(s->remaining_busy, 26);
}

TEST(LlamaCppSlots, SignalsGoIntoTheLine) {
  SlotsSnapshot s{.total = 4, .busy = 3, .idle = 1, .n_ctx = 1024, .decoded_busy = 50, .remaining_busy = 14};
  nlohmann::json signals = {{"running", 3}};
  AddSlotSignals(s, signals);
  EXPECT_EQ(signals["running"], 3);  // the /metrics signals stay
  for (std::string_view name : kSlotSignals) EXPECT_TRUE(signals.contains(name)) << name;
  EXPECT_EQ(signals["slots_idle"], 1);
  EXPECT_EQ(signals["slots_decoded_tokens"], 50);
}

TEST(LlamaCppSlots, BadShapesNameTheSlotAndField) {
  Result<SlotsSnapshot> a = ParseLlamaCppSlots(R"([{"id":3,"n_ctx":512}])");
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.status().message().find("slot 3: is_processing"), std::string::npos) << a.status().message();
  Result<SlotsSnapshot> b = ParseLlamaCppSlots(R"([{"id":1,"is_processing":true,"n_ctx":"x"}])");
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find("slot 1: n_ctx"), std::string::npos) << b.status().message();
  EXPECT_FALSE(ParseLlamaCppSlots("{not json").ok());
  EXPECT_FALSE(ParseLlamaCppSlots(R"({"slots":[]})").ok());
}

// A server started without --slots answers an error object (b4748: HTTP 501
// "This server does not support slots endpoint. Start it with `--slots`").
TEST(LlamaCppSlots, ServerErrorIsReportedWithItsMessage) {
  Result<SlotsSnapshot> s = ParseLlamaCppSlots(
      R"({"error":{"code":501,"message":"This server does not support slots endpoint. Start it with `--slots`","type":"not_supported_error"}})");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("--slots"), std::string::npos) << s.status().message();
}

}  // namespace
// Outside input: counts near INT64_MAX (or above it, unsigned) saturate instead of wrapping
// the sum (signed overflow is undefined; UBSan halts on it).
TEST(LlamaCppSlots, HugeCountsSaturateInsteadOfOverflowing) {
  const std::string big = "9000000000000000000";
  const std::string body = R"([{"id":0,"n_ctx":8,"is_processing":true,"next_token":{"n_decoded":)" + big +
                           R"(,"n_remain":18446744073709551615}},{"id":1,"n_ctx":8,"is_processing":true,"next_token":{"n_decoded":)" +
                           big + R"(,"n_remain":-1}}])";
  auto s = ParseLlamaCppSlots(body);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->decoded_busy, INT64_MAX);
  EXPECT_EQ(s->remaining_busy, INT64_MAX);
  EXPECT_EQ(s->busy, 2);
}

}  // namespace infereng::client
