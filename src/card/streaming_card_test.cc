// product.streaming: false on a generation card: each answer arrives whole (TTFT = E2E, no
// ITL or TPOT), so only end-to-end objectives and goodput thresholds apply, each refusal
// naming its line; the shipped cards that do not stream (batch, agent) pass.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "card/card_parser.h"
#include "testing/card_refusals.h"
#include "testing/paths.h"

namespace infereng::card {
namespace {

TEST(StreamingCardTest, AnAnswerThatArrivesWholeHasOnlyEndToEndObjectives) {
  const std::string head = "name: s\nproduct: {streaming: false}\n";
  const char* why = "product.streaming is false (each answer arrives whole: TTFT = E2E, no ITL or TPOT)";
  infereng::testing::ExpectCardsRefused(
      {
          {head + "slo:\n  ttft: {p99: 500ms}\n", "s.yaml:4: slo.ttft", why},
          {head + "slo:\n  e2e: {p99: 5s}\n  tpot_ms: {p50: 30}\n", "s.yaml:5: slo.tpot_ms", "only e2e objectives apply"},
          {head + "slo:\n  itl: {p99: 80ms}\n", "s.yaml:4: slo.itl", why},
          {head + "slo:\n  goodput: {e2e: 5s, ttft: 1s}\n", "slo.goodput.ttft", "only an e2e threshold applies"},
          {"name: t\nproduct: {modality: transcription, streaming: false}\n"
           "traffic: {audio: {seconds: 10}}\nmodel: {audio: {tokens_per_second: 50}}\n"
           "slo:\n  ttft: {p99: 1s}\n",
           "s.yaml:6: slo.ttft", why},
      },
      "s.yaml");
  // End-to-end objectives and a system-wide throughput floor are fine.
  auto ok = ParseCard(head + "slo:\n  e2e: {p50: 2s, p99: 5s}\n  min_output_tokens_per_s: 100\n  goodput: {e2e: 5s}\n",
                      "s.yaml");
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_FALSE(ok->product.streaming);
  // Streamed (the default): every objective applies.
  EXPECT_TRUE(ParseCard("name: s\nslo:\n  ttft: {p99: 500ms}\n  tpot: {p99: 50ms}\n", "s.yaml").ok());
}

TEST(StreamingCardTest, ShippedCardsThatDoNotStreamPass) {
  for (const char* name : {"batch.yaml", "agent.yaml", "transcription-whisper-cpp.yaml"}) {
    auto card = LoadCardFile(infereng::testing::SourceDir() + "/examples/" + name);
    ASSERT_TRUE(card.ok()) << name << ": " << card.status().ToString();
    EXPECT_FALSE(card->product.streaming) << name;
  }
}

}  // namespace
}  // namespace infereng::card
