// The transcription stream's events (Dialect::kOpenAiTranscription): vLLM's
// "transcription.chunk" (chat's delta shape under its own object; shapes from vLLM's
// TranscriptionStreamResponse, vllm/entrypoints/openai/protocol.py) and OpenAI's typed events
// ("transcript.text.delta" / "transcript.text.done", from the OpenAI API reference for
// streamed transcriptions). Not captured from a live server: no speech engine runs here.
#include <gtest/gtest.h>

#include "client/dialect.h"

namespace infereng::client {
namespace {

TEST(TranscriptionDialect, VllmChunksCarryTextAndTheFinalUsage) {
  ASSERT_TRUE(ParseDialect("transcription").ok());
  EXPECT_EQ(*ParseDialect("transcription"), Dialect::kOpenAiTranscription);
  auto text = InterpretData(Dialect::kOpenAiTranscription,
                            R"({"id":"trsc-1","object":"transcription.chunk","created":1,"model":"openai/whisper-large-v3",)"
                            R"("choices":[{"delta":{"content":" hello"},"finish_reason":null,"stop_reason":null}]})");
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_EQ(text->text, " hello");
  EXPECT_TRUE(text->has_output());
  auto usage = InterpretData(Dialect::kOpenAiTranscription,
                             R"({"id":"trsc-1","object":"transcription.chunk","created":1,"model":"m","choices":[],)"
                             R"("usage":{"prompt_tokens":266,"completion_tokens":33,"total_tokens":299}})");
  ASSERT_TRUE(usage.ok());
  EXPECT_FALSE(usage->has_output());
  EXPECT_EQ(usage->usage.prompt_tokens, 266);
  EXPECT_EQ(usage->usage.completion_tokens, 33);
  auto done = InterpretData(Dialect::kOpenAiTranscription, "[DONE]");
  ASSERT_TRUE(done.ok());
  EXPECT_TRUE(done->done);
}

TEST(TranscriptionDialect, OpenAiTypedEvents) {
  auto delta = InterpretData(Dialect::kOpenAiTranscription, R"({"type":"transcript.text.delta","delta":"The","logprobs":[]})");
  ASSERT_TRUE(delta.ok());
  EXPECT_EQ(delta->text, "The");
  // The done event repeats the whole text: it is not output again, only the end and the usage.
  auto fin = InterpretData(Dialect::kOpenAiTranscription,
                           R"({"type":"transcript.text.done","text":"The quick brown fox","usage":{"type":"tokens",)"
                           R"("input_tokens":14,"input_token_details":{"text_tokens":0,"audio_tokens":14},)"
                           R"("output_tokens":45,"total_tokens":59}})");
  ASSERT_TRUE(fin.ok());
  EXPECT_FALSE(fin->has_output());
  EXPECT_EQ(fin->finish_reason, "stop");
  EXPECT_EQ(fin->usage.prompt_tokens, 14);
  EXPECT_EQ(fin->usage.completion_tokens, 45);
  // Usage by duration (whisper-1) has no token counts: none are read.
  auto by_time = InterpretData(Dialect::kOpenAiTranscription,
                               R"({"type":"transcript.text.done","text":"x","usage":{"type":"duration","seconds":3}})");
  ASSERT_TRUE(by_time.ok());
  EXPECT_FALSE(by_time->usage.present());
  auto error = InterpretData(Dialect::kOpenAiTranscription, R"({"error":{"message":"bad audio","type":"invalid_request_error"}})");
  ASSERT_TRUE(error.ok());
  EXPECT_TRUE(error->error);
  EXPECT_NE(error->error_message.find("bad audio"), std::string::npos);
}

}  // namespace
}  // namespace infereng::client
