// POST /v1/audio/transcriptions in the embedded engine, over real HTTP on 127.0.0.1 with the
// twin behind it: the clip's length read from its WAV header becomes audio tokens by the
// model's rule and a transcript of the rule's length, answered whole (json, text,
// verbose_json) or streamed as vLLM streams it; a model without audio answers 404.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "bench/request_body.h"
#include "bench/wav_audio.h"
#include "card/audio.h"
#include "serve/http_test_client.h"
#include "serve/server.h"
#include "testing/embedded_server.h"

namespace infereng::serve {
namespace {

using nlohmann::json;
using testing::TestClient;
using testing::TestResponse;

class AudioServer {
 public:
  explicit AudioServer(std::optional<card::AudioModelSpec> audio) : server_(ServerOptions{}, Setup(audio)) {}
  // What bench sends, with `extra` form fields before the close delimiter.
  TestResponse Transcribe(int32_t audio_ms, const std::string& extra = "", bool stream = false) {
    bench::BodyOptions opt;
    opt.caps.continuous_usage = stream;
    bench::MultipartBody mb = bench::BuildTranscriptionBody(opt, bench::SyntheticWav(audio_ms, 5), 0);
    const std::string boundary = mb.content_type.substr(mb.content_type.find('=') + 1);
    if (!stream) {  // bench always streams; a plain request drops the stream fields
      const std::string field = "--" + boundary + "\r\nContent-Disposition: form-data; name=\"stream\"\r\n\r\ntrue\r\n";
      mb.body.erase(mb.body.find(field), field.size());
    }
    if (!extra.empty()) mb.body.insert(mb.body.rfind("--" + boundary + "--"), extra);
    TestClient c(server_.port());
    return c.Call("POST", "/v1/audio/transcriptions", mb.body, "Content-Type: " + mb.content_type + "\r\n");
  }
  std::string Field(const std::string& name, const std::string& value, const std::string& boundary_of) const {
    return "--" + boundary_of + "\r\nContent-Disposition: form-data; name=\"" + name + "\"\r\n\r\n" + value + "\r\n";
  }

 private:
  static twin::TwinSetup Setup(std::optional<card::AudioModelSpec> audio) {
    twin::TwinSetup setup = infereng::testing::LinearTwin({.fixed_s = 0.002, .per_prefill_token_s = 0});
    setup.audio = audio;
    setup.transcript_tokens_per_s = 3.25;
    return setup;
  }
  infereng::testing::EmbeddedServer server_;
};

std::string BoundaryFor(int32_t audio_ms) {
  const std::string ct = bench::BuildTranscriptionBody({}, bench::SyntheticWav(audio_ms, 5), 0).content_type;
  return ct.substr(ct.find('=') + 1);
}

TEST(ServeTranscription, AudioTokensAndTranscriptFollowTheClip) {
  AudioServer s(card::AudioModelSpec{});  // Whisper's rule: 50 tokens/s in 30 s windows, 4 start tokens
  TestResponse r = s.Transcribe(4'000);
  ASSERT_EQ(r.status, 200) << r.body;
  const json j = json::parse(r.body);
  const int64_t transcript = card::TranscriptTokensFor(3.25, 4'000);  // 13
  EXPECT_EQ(transcript, 13);
  EXPECT_EQ(j["usage"]["type"], "tokens");
  EXPECT_EQ(j["usage"]["input_tokens"], 4 + 1500) << r.body;  // one 30 s window
  EXPECT_EQ(j["usage"]["input_token_details"]["audio_tokens"], 1500);
  EXPECT_EQ(j["usage"]["output_tokens"], transcript);
  EXPECT_FALSE(j["text"].get<std::string>().empty());
  EXPECT_EQ(j["timings"]["predicted_n"], transcript);

  // 31 s: two windows.
  const json two = json::parse(s.Transcribe(31'000).body);
  EXPECT_EQ(two["usage"]["input_token_details"]["audio_tokens"], 3000) << two.dump();
  EXPECT_EQ(two["usage"]["output_tokens"], card::TranscriptTokensFor(3.25, 31'000));

  // max_completion_tokens caps the transcript.
  const std::string b = BoundaryFor(4'000);
  const json capped = json::parse(s.Transcribe(4'000, s.Field("max_completion_tokens", "5", b)).body);
  EXPECT_EQ(capped["usage"]["output_tokens"], 5) << capped.dump();

  TestResponse text = s.Transcribe(4'000, s.Field("response_format", "text", b));
  ASSERT_EQ(text.status, 200);
  EXPECT_TRUE(text.Header("Content-Type").starts_with("text/plain")) << text.Header("Content-Type");
  ASSERT_FALSE(text.body.empty());
  EXPECT_NE(text.body.front(), '{') << text.body;
  const json verbose = json::parse(s.Transcribe(4'000, s.Field("response_format", "verbose_json", b)).body);
  EXPECT_EQ(verbose["task"], "transcribe");
  EXPECT_DOUBLE_EQ(verbose["duration"].get<double>(), 4.0);
  EXPECT_EQ(verbose["segments"].size(), 1u);
}

TEST(ServeTranscription, StreamsAsVllmDoesWithUsage) {
  AudioServer s(card::AudioModelSpec{.tokens_per_second = 25, .encoder_positions_per_second = 50, .window_s = 0,
                                     .prompt_tokens = 16, .encoder_params = 6.35e8});
  TestResponse r = s.Transcribe(10'000, "", /*stream=*/true);
  ASSERT_EQ(r.status, 200) << r.body;
  const std::vector<std::string> events = r.Events();
  ASSERT_GE(events.size(), 3u) << r.body;
  EXPECT_EQ(events.back(), "[DONE]");
  int64_t content_events = 0, last_usage = 0;
  for (size_t k = 0; k + 1 < events.size(); ++k) {
    const json e = json::parse(events[k]);
    EXPECT_EQ(e["object"], "transcription.chunk") << events[k];
    EXPECT_TRUE(e["id"].get<std::string>().starts_with("trsc-"));
    if (!e["choices"].empty()) {
      EXPECT_FALSE(e["choices"][0]["delta"].contains("role")) << "no role chunk: " << events[k];
      ++content_events;
      // Continuous usage (stream_continuous_usage_stats): a busy server may write several
      // tokens in one event, so the count grows by them; it never shrinks.
      const int64_t now = e["usage"]["completion_tokens"].get<int64_t>();
      EXPECT_GT(now, last_usage) << events[k];
      last_usage = now;
    }
  }
  const json usage = json::parse(events[events.size() - 2])["usage"];
  EXPECT_EQ(usage["completion_tokens"], card::TranscriptTokensFor(3.25, 10'000));
  EXPECT_EQ(usage["prompt_tokens"], 16 + 250) << usage.dump();  // 10 s x 25 tokens/s, no padding
  EXPECT_EQ(last_usage, usage["completion_tokens"].get<int64_t>());
  EXPECT_GE(content_events, 1);
  EXPECT_LE(content_events, last_usage);
}

TEST(ServeTranscription, AModelWithoutAudioAnswers404) {
  AudioServer s(std::nullopt);
  TestResponse r = s.Transcribe(1'000);
  EXPECT_EQ(r.status, 404) << r.body;
  EXPECT_NE(r.body.find("does not support Transcriptions API"), std::string::npos) << r.body;
}

}  // namespace
}  // namespace infereng::serve
