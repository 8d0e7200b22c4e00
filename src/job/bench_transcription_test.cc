// Transcription end to end: bench sends each drawn clip as a WAV file in a multipart
// /v1/audio/transcriptions request to the embedded engine on 127.0.0.1 (the twin with a
// LinearCostModel behind it), streams the transcript back, and the records carry the clip;
// the server's usage counts its audio tokens and transcript exactly, its prefill costs what
// the twin predicts for the audio tokens and the encoder, and the summary, table and report
// show the real-time factor.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "card/audio.h"
#include "card/card_parser.h"
#include "job/bench_job.h"
#include "metrics/derive.h"
#include "metrics/records_io.h"
#include "metrics/summary_table.h"
#include "report/report.h"
#include "testing/embedded_server.h"
#include "testing/paths.h"

namespace infereng::job {
namespace {

namespace fs = std::filesystem;

card::WorkloadCard Card() {
  Result<card::WorkloadCard> c = card::ParseCard(R"(name: asr
product: {modality: transcription}
traffic:
  concurrency: 1
  audio: {seconds: {uniform: [1, 8]}, transcript_tokens_per_s: 3.25}
model:
  id: asr
  audio: {tokens_per_second: 25, encoder_positions_per_second: 50, window_s: 0, prompt_tokens: 4, encoder_params: 1e8}
bench: {warmup: 0s, seed: 5}
)",
                                                 "asr.yaml");
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? *c : card::WorkloadCard{};
}

TEST(BenchTranscription, ClipsAreSentCountedAndCostWhatTheTwinPredicts) {
  const card::WorkloadCard card = Card();
  const twin::TwinSetup setup =
      testing::TranscriptionTwin(card, {.fixed_s = 0.002, .per_prefill_token_s = 20e-6, .per_encoder_gflop_s = 1e-4});
  serve::ServerOptions so;
  so.model_name = "asr";
  testing::EmbeddedServer server(so, setup);
  ASSERT_TRUE(server.started());

  bench::BenchOptions o;
  o.target = server.url();
  o.card = card;
  o.requests = 30;
  o.warmup = 0;
  o.out_dir = testing::ScratchPath("bench-asr");
  fs::remove_all(o.out_dir);
  Result<bench::BenchResult> r = RunBench(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const metrics::Summary& s = r->summary;
  ASSERT_EQ(s.counts.succeeded, 30) << r->first_error;

  Result<std::vector<metrics::RequestRecord>> records = metrics::ReadRecordsFile(o.out_dir + "/requests.jsonl");
  ASSERT_TRUE(records.ok()) << records.status().ToString();
  double audio_s = 0;
  for (const metrics::RequestRecord& rec : *records) {
    ASSERT_GE(rec.audio_ms, 1000) << rec.id;
    ASSERT_LE(rec.audio_ms, 8000) << rec.id;
    audio_s += rec.audio_ms / 1000.0;
    const card::AudioCost cost = card::AudioCostFor(*card.model.audio, rec.audio_ms);
    EXPECT_EQ(rec.audio_tokens, cost.tokens) << rec.id;
    // The server read the clip's length from its WAV header and counted both exactly.
    EXPECT_EQ(rec.prompt_tokens, 4 + cost.tokens) << rec.id;
    EXPECT_EQ(rec.completion_tokens, card::TranscriptTokensFor(3.25, rec.audio_ms)) << rec.id;
    EXPECT_EQ(metrics::DeriveRequest(rec).output_tokens, rec.completion_tokens) << rec.id;
    // The engine's prefill (its `timings`): 2 ms + 20 us per prompt token + 0.1 ms per
    // encoder GFLOP (2 x 1e8 x positions), to the microsecond the server prints.
    const double prefill_ms = 2 + 0.02 * static_cast<double>(4 + cost.tokens) + 0.02 * static_cast<double>(cost.encoder_positions);
    EXPECT_NEAR(NanosToMillis(rec.server_prefill), prefill_ms, 0.002) << rec.id;
  }

  ASSERT_TRUE(s.audio.has_value());
  EXPECT_EQ(s.audio->requests, 30);
  EXPECT_NEAR(s.audio->audio_s, audio_s, 1e-9);
  EXPECT_GT(s.audio->audio_s_per_s, 0);
  ASSERT_EQ(s.audio->rtf.count, 30);
  EXPECT_GT(s.audio->rtf.p50, 0);
  EXPECT_LT(s.audio->rtf.p50, 1) << "a clip of seconds is transcribed in tens of milliseconds here";
  EXPECT_TRUE(r->summary_json.contains("audio"));
  const std::string table = metrics::FormatSummaryTable(s, {.show_boundaries = false});
  EXPECT_NE(table.find("transcription: 30 clips"), std::string::npos) << table;
  ASSERT_TRUE(report::WriteReport(o.out_dir).ok());
  std::ifstream report(o.out_dir + "/report.html");
  std::stringstream html;
  html << report.rdbuf();
  EXPECT_NE(html.str().find("real-time factor"), std::string::npos);
  fs::remove_all(o.out_dir);

  // A dataset of text prompts has no clips: refused before any request.
  o.dataset = "prompts.jsonl";
  Result<bench::BenchResult> no_dataset = RunBench(o);
  ASSERT_FALSE(no_dataset.ok());
  EXPECT_NE(no_dataset.status().message().find("--dataset: not supported with a transcription card"), std::string::npos)
      << no_dataset.status().ToString();
  o.dataset.clear();

  // A transcription card goes only to the transcriptions endpoint.
  o.endpoint = "chat";
  Result<bench::BenchResult> refused = RunBench(o);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("use --endpoint transcriptions"), std::string::npos) << refused.status().ToString();
  fs::remove_all(o.out_dir);
}

}  // namespace
}  // namespace infereng::job
