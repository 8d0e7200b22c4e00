// A generation answered whole (product.streaming: false): the answer read into one output
// event, on llama.cpp's real non-streamed answers and on the transcription shapes, and the
// record it makes (TTFT = E2E, no TPOT).
#include "client/whole_answer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "client/answer_test_util.h"
#include "client/http_error.h"
#include "client/test_fixture.h"
#include "metrics/derive.h"
#include "testing/paths.h"

namespace infereng::client {
namespace {

using ::testing::HasSubstr;

// Runs one answer through WholeAnswerHandler -> RecordingHandler, as the transport does:
// sent at 1 ms, status line at 40 ms, last byte at 90 ms.
metrics::RequestRecord Record(Dialect dialect, const std::string& body, int status = 200) {
  metrics::RequestRecord rec;
  rec.t_sched = 0;
  return testing::RecordAnswer([&](RecordingHandler* inner) { return WholeAnswerHandler(inner, dialect); }, body, status,
                               {.send = 1'000'000, .first_byte = 40'000'000, .end = 90'000'000}, rec);
}

TEST(WholeAnswer, RealLlamaCppChatAnswerIsOneEventWithItsUsageAndTimings) {
  // llama.cpp b4748, POST /v1/chat/completions without "stream": 12 tokens, finish length.
  const testing::CapturedResponse cap = testing::LoadCapture("v1_chat_nonstream.txt");
  Result<ChunkInfo> info = ParseWholeAnswer(Dialect::kOpenAiChat, cap.body);
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->text, "星 Een居 typoajamyrelation Ukrainemyaja Fichefind");
  EXPECT_EQ(info->usage.prompt_tokens, 34);
  EXPECT_EQ(info->usage.completion_tokens, 12);
  EXPECT_EQ(info->finish_reason, "length");
  EXPECT_DOUBLE_EQ(info->timings.prefill_ms, 58.502);
  EXPECT_DOUBLE_EQ(info->timings.decode_ms, 172.025);

  metrics::RequestRecord r = Record(Dialect::kOpenAiChat, cap.body);
  ASSERT_TRUE(r.ok()) << r.error_message;
  ASSERT_EQ(r.chunks.size(), 1u);
  EXPECT_EQ(r.chunks[0].t, 90'000'000);  // the answer's last byte, not its first
  EXPECT_EQ(r.chunks[0].tokens, 12);
  EXPECT_EQ(r.prompt_tokens, 34);
  EXPECT_EQ(r.completion_tokens, 12);
  EXPECT_EQ(r.finish_reason, "length");
  EXPECT_EQ(r.server_prefill, MillisToNanos(58.502));
  EXPECT_EQ(r.token_source, metrics::TokenSource::kUsageFinal);  // the answer's total, as a final usage
  const metrics::RequestMetrics m = metrics::DeriveRequest(r);
  ASSERT_TRUE(m.ttft_ms && m.e2e_ms);
  EXPECT_DOUBLE_EQ(*m.ttft_ms, 89.0);  // the user sees the first token with the last
  EXPECT_DOUBLE_EQ(*m.e2e_ms, 89.0);
  EXPECT_FALSE(m.tpot_ms.has_value());  // one event says nothing about decode speed
  EXPECT_TRUE(m.itl_ms.empty());
  EXPECT_EQ(m.output_tokens, 12);
}

TEST(WholeAnswer, RealLlamaCppCompletionsAnswer) {
  const testing::CapturedResponse cap = testing::LoadCapture("v1_completions_nonstream.txt");
  metrics::RequestRecord r = Record(Dialect::kOpenAiCompletions, cap.body);
  ASSERT_TRUE(r.ok()) << r.error_message;
  ASSERT_EQ(r.chunks.size(), 1u);
  EXPECT_EQ(r.chunks[0].tokens, 12);
  EXPECT_EQ(r.prompt_tokens, 6);
  EXPECT_EQ(r.finish_reason, "length");
}

TEST(WholeAnswer, ReasoningAndCachedTokensComeFromTheUsage) {
  const std::string body =
      R"({"choices":[{"message":{"role":"assistant","reasoning_content":"think","content":"42"},"finish_reason":"stop"}],)"
      R"("usage":{"prompt_tokens":20,"completion_tokens":9,"prompt_tokens_details":{"cached_tokens":16},)"
      R"("completion_tokens_details":{"reasoning_tokens":7}}})";
  metrics::RequestRecord r = Record(Dialect::kOpenAiChat, body);
  ASSERT_TRUE(r.ok()) << r.error_message;
  ASSERT_EQ(r.chunks.size(), 1u);
  EXPECT_FALSE(r.chunks[0].reasoning);  // it carries the answer too: visible
  EXPECT_EQ(r.cached_tokens, 16);
  EXPECT_EQ(r.reasoning_tokens, 7);
  const metrics::RequestMetrics m = metrics::DeriveRequest(r);
  EXPECT_EQ(m.reasoning_tokens, 7);
  EXPECT_EQ(m.visible_output_tokens, 2);
  ASSERT_TRUE(m.ttft_visible_ms.has_value());
  EXPECT_DOUBLE_EQ(*m.ttft_visible_ms, *m.ttft_ms);
}

TEST(WholeAnswer, TranscriptionShapes) {
  // OpenAI json with token usage (gpt-4o-transcribe).
  Result<ChunkInfo> openai = ParseWholeAnswer(
      Dialect::kOpenAiTranscription,
      R"({"text":"hello there","usage":{"type":"tokens","input_tokens":14,"output_tokens":3,"total_tokens":17}})");
  ASSERT_TRUE(openai.ok()) << openai.status().ToString();
  EXPECT_EQ(openai->text, "hello there");
  EXPECT_EQ(openai->usage.prompt_tokens, 14);
  EXPECT_EQ(openai->usage.completion_tokens, 3);
  EXPECT_EQ(openai->finish_reason, "stop");
  // vLLM and whisper-1: usage by duration, no token count.
  Result<ChunkInfo> vllm =
      ParseWholeAnswer(Dialect::kOpenAiTranscription, R"({"text":"hello","usage":{"type":"duration","seconds":4}})");
  ASSERT_TRUE(vllm.ok());
  EXPECT_EQ(vllm->usage.completion_tokens, -1);
  // verbose_json: the segments' decoder tokens are the count when usage has none.
  Result<ChunkInfo> verbose = ParseWholeAnswer(
      Dialect::kOpenAiTranscription,
      R"({"task":"transcribe","language":"english","duration":4.0,"text":"a b",)"
      R"("segments":[{"id":0,"text":"a","tokens":[50364,257]},{"id":1,"text":" b","tokens":[272,50414,50257]}]})");
  ASSERT_TRUE(verbose.ok());
  EXPECT_EQ(verbose->usage.completion_tokens, 5);
  metrics::RequestRecord r = Record(Dialect::kOpenAiTranscription,
                                    R"({"text":"a b","segments":[{"tokens":[1,2]},{"tokens":[3,4,5]}]})");
  ASSERT_TRUE(r.ok()) << r.error_message;
  ASSERT_EQ(r.chunks.size(), 1u);
  EXPECT_EQ(r.chunks[0].tokens, 5);
  // No count at all: one event, counted by the client as one token and said so.
  metrics::RequestRecord bare = Record(Dialect::kOpenAiTranscription, R"({"text":"a b c"})");
  ASSERT_TRUE(bare.ok()) << bare.error_message;
  EXPECT_EQ(bare.completion_tokens, -1);
  EXPECT_EQ(bare.token_source, metrics::TokenSource::kClientCount);
}

TEST(WholeAnswer, BadAnswersAreNamed) {
  metrics::RequestRecord html = Record(Dialect::kOpenAiChat, "<html>gateway</html>");
  EXPECT_EQ(html.error, metrics::ErrorClass::kProtocol);
  EXPECT_EQ(html.error_message, "the chat answer is not JSON: <html>gateway</html>");
  EXPECT_TRUE(html.chunks.empty());

  metrics::RequestRecord error = Record(Dialect::kOpenAiChat, R"({"error":{"message":"overloaded","type":"server_error"}})");
  EXPECT_EQ(error.error, metrics::ErrorClass::kStreamError);
  EXPECT_EQ(error.error_message, "error object in the chat answer: server_error: overloaded");

  metrics::RequestRecord empty = Record(Dialect::kOpenAiCompletions, R"({"choices":[{"text":"","finish_reason":"stop"}]})");
  EXPECT_EQ(empty.error, metrics::ErrorClass::kProtocol);
  EXPECT_THAT(empty.error_message, HasSubstr("no output in the completions answer (no text and no completion count)"));

  metrics::RequestRecord list = Record(Dialect::kOpenAiTranscription, "[1,2]");
  EXPECT_EQ(list.error, metrics::ErrorClass::kProtocol);
  EXPECT_EQ(list.error_message, "the transcription answer is not a JSON object: [1,2]");

  // An HTTP error keeps its class and message; the body is not parsed as an answer.
  metrics::RequestRecord http = Record(Dialect::kOpenAiChat, R"({"error":"bad"})", 400);
  EXPECT_EQ(http.error, metrics::ErrorClass::kHttp4xx);
  EXPECT_EQ(http.error_message, "HTTP 400");
}

// A whisper.cpp capture (testdata/whispercpp-233fe1f, PROVENANCE.txt): its status and body.
struct Whisper {
  int status = 0;
  std::string body;
};
Whisper WhisperCapture(const std::string& name) {
  const std::string path = infereng::testing::SourceDir() + "/src/client/testdata/whispercpp-233fe1f/" + name;
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string raw = ss.str();
  const std::size_t split = raw.find("\r\n\r\n");
  if (!in || raw.rfind("HTTP/1.1 ", 0) != 0 || split == std::string::npos) {
    ADD_FAILURE() << "missing or malformed capture " << path;
    return {};
  }
  return {std::stoi(raw.substr(9, 3)), raw.substr(split + 4)};
}

// whisper.cpp's server (a real speech engine, random-weight Whisper-tiny): json has only
// the text; verbose_json lists each segment's decoder tokens; errors are plain text.
TEST(WholeAnswer, RealWhisperCppAnswers) {
  const Whisper json = WhisperCapture("4s-json.http");
  ASSERT_EQ(json.status, 200);
  metrics::RequestRecord bare = Record(Dialect::kOpenAiTranscription, json.body);
  ASSERT_TRUE(bare.ok()) << bare.error_message;
  ASSERT_EQ(bare.chunks.size(), 1u);
  EXPECT_EQ(bare.completion_tokens, -1);  // no usage: the count is unknown, and said to be
  EXPECT_EQ(bare.token_source, metrics::TokenSource::kClientCount);
  EXPECT_EQ(bare.finish_reason, "stop");

  // stream=true is ignored: the same whole answer (so a streamed card says what to do,
  // http_client_test's NonStreamedJsonAnswerToAStreamRequestIsAProtocolError).
  EXPECT_EQ(WhisperCapture("4s-json-stream-true.http").body, json.body);

  const Whisper verbose = WhisperCapture("4s-verbose_json.http");
  ASSERT_EQ(verbose.status, 200);
  Result<ChunkInfo> four = ParseWholeAnswer(Dialect::kOpenAiTranscription, verbose.body);
  ASSERT_TRUE(four.ok()) << four.status().ToString();
  EXPECT_EQ(four->text, "inee\n");
  EXPECT_EQ(four->usage.completion_tokens, 1);  // "tokens":[22036]
  EXPECT_EQ(four->usage.prompt_tokens, -1);

  // 31 s: 121 segments of one token each (PROVENANCE.txt).
  metrics::RequestRecord r = Record(Dialect::kOpenAiTranscription, WhisperCapture("31s-verbose_json.http").body);
  ASSERT_TRUE(r.ok()) << r.error_message;
  ASSERT_EQ(r.chunks.size(), 1u);
  EXPECT_EQ(r.chunks[0].tokens, 121);
  EXPECT_EQ(r.completion_tokens, 121);

  // Plain-text errors keep their words in the message.
  for (const char* name : {"err-no-file-field.http", "err-random-bytes.http"}) {
    const Whisper e = WhisperCapture(name);
    EXPECT_EQ(e.status, 400) << name;
    EXPECT_EQ(HttpErrorMessage(e.status, "Bad Request", e.body), "HTTP 400 Bad Request: Invalid request") << name;
  }
  const Whisper get = WhisperCapture("err-get.http");
  EXPECT_EQ(get.status, 404);
  EXPECT_THAT(HttpErrorMessage(get.status, "Not Found", get.body), HasSubstr("File Not Found (/v1/audio/transcriptions)"));
  // A text/plain answer where JSON was asked for is named, not half-read.
  metrics::RequestRecord text = Record(Dialect::kOpenAiTranscription, WhisperCapture("4s-text.http").body);
  EXPECT_EQ(text.error, metrics::ErrorClass::kProtocol);
  EXPECT_THAT(text.error_message, HasSubstr("the transcription answer is not JSON: inee"));
}

}  // namespace
}  // namespace infereng::client
