// A transcription card (product.modality: transcription): the clip rule (card/audio.h), what
// the card accepts and defaults (bench.endpoint transcriptions, token lengths derived from
// the clips), and the FILE:LINE errors for what only makes sense elsewhere.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "card/audio.h"
#include "card/card_parser.h"
#include "card/gaps.h"
#include "testing/card_refusals.h"
#include "testing/paths.h"

namespace infereng::card {
namespace {

using ::testing::HasSubstr;

TEST(AudioRule, WhisperPadsToWindowsAndAudioLlmsPoolPositions) {
  const AudioModelSpec whisper;  // 50 tokens/s, 30 s windows
  EXPECT_EQ(AudioCostFor(whisper, 1).tokens, 1500);
  EXPECT_EQ(AudioCostFor(whisper, 12'000).tokens, 1500);
  EXPECT_EQ(AudioCostFor(whisper, 30'000).tokens, 1500);  // exactly one window
  EXPECT_EQ(AudioCostFor(whisper, 30'001).tokens, 3000);
  EXPECT_EQ(AudioCostFor(whisper, 30'001).encoder_positions, 3000);
  const AudioModelSpec qwen{.tokens_per_second = 25, .encoder_positions_per_second = 50, .window_s = 0};
  EXPECT_EQ(AudioCostFor(qwen, 10'000).tokens, 250);
  EXPECT_EQ(AudioCostFor(qwen, 10'000).encoder_positions, 500);
  EXPECT_EQ(AudioCostFor(qwen, 10'001).tokens, 251);  // a started token counts
  const AudioModelSpec voxtral{.tokens_per_second = 12.5, .window_s = 0};
  EXPECT_EQ(AudioCostFor(voxtral, 8'000).tokens, 100);
  EXPECT_EQ(AudioCostFor(voxtral, 8'000).encoder_positions, 100);  // 0: the token rate

  EXPECT_EQ(TranscriptTokensFor(3.25, 4'000), 13);
  EXPECT_EQ(TranscriptTokensFor(3.25, 60'000), 195);
  EXPECT_EQ(TranscriptTokensFor(3.25, 10), 1);  // never zero
  EXPECT_DOUBLE_EQ(AudioEncoderFlops(AudioModelSpec{.encoder_params = 6e8}, 1500), 2 * 6e8 * 1500);
}

constexpr const char* kCard = R"(name: asr
product:
  modality: transcription
traffic:
  arrival: 2rps
  audio: {seconds: {lognormal: {p50: 10, p99: 60}, max: 120}, transcript_tokens_per_s: 3}
model:
  audio: {tokens_per_second: 25, encoder_positions_per_second: 50, window_s: 0, prompt_tokens: 8, encoder_params: 6.35e8}
slo:
  ttft: {p99: 1s}
)";

TEST(TranscriptionCardTest, ParsesClipsAndDerivesTokenLengths) {
  auto card = ParseCard(kCard, "a.yaml");
  ASSERT_TRUE(card.ok()) << card.status().ToString();
  EXPECT_TRUE(card->product.Transcription());
  EXPECT_FALSE(card->product.PrefillOnly());
  EXPECT_EQ(card->bench.endpoint, "transcriptions");  // the default for this modality
  ASSERT_TRUE(card->traffic.audio.has_value());
  EXPECT_EQ(card->traffic.audio->seconds.kind, Distribution::Kind::kLognormal);
  EXPECT_DOUBLE_EQ(card->traffic.audio->transcript_tokens_per_s, 3);
  ASSERT_TRUE(card->model.audio.has_value());
  EXPECT_DOUBLE_EQ(card->model.audio->tokens_per_second, 25);
  EXPECT_EQ(card->model.audio->prompt_tokens, 8);
  // The planning tools' lengths: the clips' scaled by the two rates.
  EXPECT_DOUBLE_EQ(card->traffic.output_tokens.p50, 30);
  EXPECT_DOUBLE_EQ(card->traffic.output_tokens.p99, 180);
  EXPECT_DOUBLE_EQ(card->traffic.output_tokens.max, 360);
  EXPECT_DOUBLE_EQ(card->traffic.input_tokens.p50, 250);
  EXPECT_DOUBLE_EQ(card->traffic.input_tokens.max, 3000);
}

void ExpectRefused(const std::vector<testing::CardRefusal>& cases) { testing::ExpectCardsRefused(cases, "a.yaml"); }

TEST(TranscriptionCardTest, MistakesAreErrorsNamingTheirLine) {
  const std::string head = "product:\n  modality: transcription\nmodel:\n  audio: {tokens_per_second: 50}\n";  // lines 1-4
  const std::string clips = "traffic:\n  audio: {seconds: 10}\n";                                               // lines 5-6
  ExpectRefused({
      {head, "traffic.audio", "is required on a transcription card"},
      {"product:\n  modality: transcription\n" + clips, "model.audio", "is required on a transcription card"},
      {head + clips + "  output_tokens: 50\n", "a.yaml:7: traffic.output_tokens", "does not apply to a transcription card"},
      {head + clips + "  input_tokens: 50\n", "a.yaml:7: traffic.input_tokens", "does not apply to a transcription card"},
      {head + clips + "  sessions: {turns: 3}\n", "a.yaml:7: traffic.sessions", "does not apply to a transcription card"},
      {head + "traffic:\n  audio: {seconds: 601}\n", "a.yaml:6: traffic.audio.seconds", "at most 600 s"},
      {head + "traffic:\n  audio: {seconds: {uniform: [1, 900]}}\n", "a.yaml:6: traffic.audio.seconds.max", "at most 600 s"},
      {head + "traffic:\n  audio: {transcript_tokens_per_s: 3}\n", "a.yaml:6: traffic.audio", "needs seconds"},
      {head + "traffic:\n  audio: {seconds: 5, transcript_tokens_per_s: 0}\n", "a.yaml:6: traffic.audio.transcript_tokens_per_s",
       "above 0"},
      {head + clips + "bench:\n  endpoint: chat\n", "a.yaml:8: bench.endpoint", "must be transcriptions on a transcription card"},
      {"product:\n  modality: transcription\nmodel:\n  audio: {window_s: 0.5}\n", "a.yaml:4: model.audio.window_s",
       "0 (no padding) or between 1 and 3600"},
      {"product:\n  modality: transcription\nmodel:\n  audio: [50]\n", "a.yaml:4: model.audio", "a map like"},
  });
}

TEST(TranscriptionCardTest, AudioFieldsNeedTheModality) {
  ExpectRefused({
      {"product:\n  modality: audio\n", "a.yaml:2: product.modality", "speech to text is \"transcription\""},
      {"traffic:\n  audio: {seconds: 5}\n", "a.yaml:2: traffic.audio", "only applies to a transcription card"},
      {"bench:\n  endpoint: transcriptions\n", "a.yaml:2: bench.endpoint", "needs product.modality: transcription"},
  });
}

TEST(TranscriptionCardTest, TheExampleCardParsesAndCardCheckAsksForClips) {
  auto card = LoadCardFile(testing::SourceDir() + "/examples/transcription.yaml");
  ASSERT_TRUE(card.ok()) << card.status().ToString();
  EXPECT_EQ(card->bench.endpoint, "transcriptions");
  EXPECT_TRUE(card->Assumed("traffic.audio.seconds"));
  EXPECT_TRUE(card->Assumed("model.audio.encoder_params"));

  auto bare = ParseCard(std::string(kCard), "a.yaml");
  ASSERT_TRUE(bare.ok());
  std::vector<std::string> missing;
  for (const Gap& g : FindGaps(*bare)) {
    if (g.kind == Gap::Kind::kMissing) missing.push_back(g.path);
  }
  for (const char* never : {"traffic.input_tokens", "traffic.output_tokens", "traffic.prefix", "quality.eval_set",
                            "traffic.audio.seconds", "model.audio.encoder_params"}) {
    EXPECT_THAT(missing, ::testing::Not(::testing::Contains(never))) << never;
  }
  EXPECT_THAT(missing, ::testing::Contains("slo.e2e"));
}

}  // namespace
}  // namespace infereng::card
