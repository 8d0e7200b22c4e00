// Answers not streamed (product.streaming: false), end to end: bench asks the embedded
// engine on 127.0.0.1 for each answer whole ("stream": false; stream=false in a
// transcription's form), reads it as one output event (client/whole_answer.h), and the
// records carry the server's exact counts with TTFT = E2E and no TPOT.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "card/audio.h"
#include "card/card_parser.h"
#include "job/bench_job.h"
#include "metrics/derive.h"
#include "metrics/records_io.h"
#include "testing/embedded_server.h"
#include "testing/paths.h"

namespace infereng::job {
namespace {

namespace fs = std::filesystem;

card::WorkloadCard Card(const std::string& yaml) {
  Result<card::WorkloadCard> c = card::ParseCard(yaml, "whole.yaml");
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? *c : card::WorkloadCard{};
}

// Runs `requests` requests of `card` and returns its records (every one must succeed).
std::vector<metrics::RequestRecord> RunWhole(const std::string& url, const card::WorkloadCard& card, const std::string& endpoint,
                                        int requests) {
  bench::BenchOptions o;
  o.target = url;
  o.card = card;
  if (!endpoint.empty()) o.endpoint = endpoint;
  o.requests = requests;
  o.warmup = 0;
  o.out_dir = testing::ScratchPath("bench-whole-" + (endpoint.empty() ? card.bench.endpoint : endpoint));
  fs::remove_all(o.out_dir);
  Result<bench::BenchResult> r = RunBench(o);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  if (!r.ok()) return {};
  EXPECT_EQ(r->summary.counts.succeeded, requests) << r->first_error;
  EXPECT_EQ(r->summary.tpot_ms.count, 0) << "a whole answer says nothing about decode speed";
  EXPECT_EQ(r->summary.itl_ms.count, 0);
  Result<std::vector<metrics::RequestRecord>> records = metrics::ReadRecordsFile(o.out_dir + "/requests.jsonl");
  EXPECT_TRUE(records.ok()) << records.status().ToString();
  fs::remove_all(o.out_dir);
  return records.ok() ? *records : std::vector<metrics::RequestRecord>{};
}

// 16 output tokens: the prefill (2 ms + 64 x 20 us) and 15 decode steps of 2 ms each, so a
// whole answer comes after >= 30 ms where a streamed first token would come after ~3 ms.
TEST(BenchWholeAnswer, ChatAndCompletionsAnswersArriveWholeWithExactCounts) {
  serve::ServerOptions so;
  so.model_name = "m";
  testing::EmbeddedServer server(so, testing::LinearTwin({.fixed_s = 0.002, .per_prefill_token_s = 20e-6}));
  ASSERT_TRUE(server.started());
  const card::WorkloadCard card = Card(R"(name: whole
product: {streaming: false}
traffic: {concurrency: 1, input_tokens: 64, output_tokens: 16}
model: {id: m}
slo: {e2e: {p99: 5s}}
bench: {warmup: 0s, seed: 9}
)");
  for (const char* endpoint : {"chat", "completions"}) {
    const std::vector<metrics::RequestRecord> records = RunWhole(server.url(), card, endpoint, 12);
    ASSERT_EQ(records.size(), 12u) << endpoint;
    for (const metrics::RequestRecord& rec : records) {
      ASSERT_TRUE(rec.ok()) << endpoint << ": " << rec.error_message;
      ASSERT_EQ(rec.chunks.size(), 1u) << endpoint;
      EXPECT_EQ(rec.chunks[0].tokens, 16) << endpoint;
      EXPECT_EQ(rec.completion_tokens, 16) << endpoint;
      EXPECT_EQ(rec.prompt_tokens, 64) << endpoint;
      const metrics::RequestMetrics m = metrics::DeriveRequest(rec);
      ASSERT_TRUE(m.ttft_ms && m.e2e_ms) << endpoint;
      EXPECT_DOUBLE_EQ(*m.ttft_ms, *m.e2e_ms) << endpoint;
      EXPECT_GE(*m.ttft_ms, 30.0) << endpoint << ": the first token came before the decode ended";
      EXPECT_FALSE(m.tpot_ms.has_value()) << endpoint;
    }
  }
}

TEST(BenchWholeAnswer, TranscriptsArriveWholeWithTheServersCounts) {
  const card::WorkloadCard card = Card(R"(name: asr
product: {modality: transcription, streaming: false}
traffic:
  concurrency: 1
  audio: {seconds: {uniform: [1, 6]}, transcript_tokens_per_s: 3.25}
model:
  id: asr
  audio: {tokens_per_second: 25, window_s: 0, prompt_tokens: 4}
bench: {warmup: 0s, seed: 5}
)");
  const twin::TwinSetup setup = testing::TranscriptionTwin(card, {.fixed_s = 0.002, .per_prefill_token_s = 20e-6});
  serve::ServerOptions so;
  so.model_name = "asr";
  testing::EmbeddedServer server(so, setup);
  ASSERT_TRUE(server.started());
  const std::vector<metrics::RequestRecord> records = RunWhole(server.url(), card, "", 10);
  ASSERT_EQ(records.size(), 10u);
  for (const metrics::RequestRecord& rec : records) {
    ASSERT_TRUE(rec.ok()) << rec.error_message;
    ASSERT_EQ(rec.chunks.size(), 1u);
    const int64_t transcript = card::TranscriptTokensFor(3.25, rec.audio_ms);
    EXPECT_EQ(rec.chunks[0].tokens, transcript) << rec.id;
    EXPECT_EQ(rec.completion_tokens, transcript) << rec.id;
    EXPECT_EQ(rec.prompt_tokens, 4 + card::AudioCostFor(*card.model.audio, rec.audio_ms).tokens) << rec.id;
  }
}

// --response-format verbose_json: the transcript's segments count the decoder's tokens (the
// embedded engine also gives usage); refused where it cannot apply, before any request.
TEST(BenchWholeAnswer, ResponseFormatIsATranscriptionsChoice) {
  const std::string asr = R"(name: asr
product: {modality: transcription, streaming: STREAM}
traffic: {concurrency: 1, audio: {seconds: 4}}
model: {id: asr, audio: {tokens_per_second: 25, window_s: 0, prompt_tokens: 4}}
bench: {warmup: 0s}
)";
  auto with = [&](const char* streaming) {
    std::string y = asr;
    y.replace(y.find("STREAM"), 6, streaming);
    return Card(y);
  };
  const card::WorkloadCard whole = with("false");
  const twin::TwinSetup setup = testing::TranscriptionTwin(whole, {.fixed_s = 0.002, .per_prefill_token_s = 20e-6});
  serve::ServerOptions so;
  so.model_name = "asr";
  testing::EmbeddedServer server(so, setup);
  ASSERT_TRUE(server.started());

  bench::BenchOptions o;
  o.target = server.url();
  o.card = whole;
  o.requests = 3;
  o.warmup = 0;
  o.response_format = "verbose_json";
  o.out_dir = testing::ScratchPath("bench-whole-verbose");
  fs::remove_all(o.out_dir);
  Result<bench::BenchResult> r = RunBench(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->summary.counts.succeeded, 3) << r->first_error;
  EXPECT_EQ(r->summary.counts.output_tokens, 3 * card::TranscriptTokensFor(3.25, 4000));
  fs::remove_all(o.out_dir);

  auto refused = [&](bench::BenchOptions bad, const std::string& expected) {
    Result<bench::BenchResult> rr = RunBench(bad);
    ASSERT_FALSE(rr.ok()) << expected;
    EXPECT_EQ(rr.status().code(), Status::Code::kInvalidArgument) << rr.status().ToString();
    EXPECT_NE(rr.status().message().find(expected), std::string::npos) << rr.status().ToString();
  };
  bench::BenchOptions streamed = o;
  streamed.card = with("true");
  refused(streamed, "--response-format verbose_json: a streamed transcription is answered in json events; "
                    "verbose_json needs product.streaming: false in the card");
  bench::BenchOptions chat = o;
  chat.card = Card("name: c\nproduct: {streaming: false}\ntraffic: {concurrency: 1}\n");
  refused(chat, "--response-format verbose_json: only for transcriptions (this run's endpoint is chat)");
  bench::BenchOptions srt = o;
  srt.response_format = "srt";
  refused(srt, "--response-format srt: expected json or verbose_json");
}

}  // namespace
}  // namespace infereng::job
