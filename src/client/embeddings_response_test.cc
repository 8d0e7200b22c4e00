// The /v1/embeddings answer: parsed into what a benchmark needs, and checked against the
// request (one vector per input) by EmbeddingsHandler before the record is final.
#include "client/embeddings_response.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <memory>
#include <sstream>

#include "client/answer_test_util.h"
#include "testing/paths.h"

namespace infereng::client {
namespace {

using ::testing::HasSubstr;

constexpr const char* kTwo =
    R"({"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.6,-0.8,0.0]},)"
    R"({"object":"embedding","index":1,"embedding":[1,0,0]}],"model":"m","usage":{"prompt_tokens":7,"total_tokens":7}})";

TEST(EmbeddingsResponseTest, GoodAnswerGivesCountDimensionAndUsage) {
  Result<EmbeddingsResponse> r = ParseEmbeddingsResponse(kTwo);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->vectors, 2);
  EXPECT_EQ(r->dimension, 3);
  EXPECT_EQ(r->prompt_tokens, 7);
  // No usage: -1, not 0. A base64 vector counts as a vector of unknown dimension.
  Result<EmbeddingsResponse> b64 = ParseEmbeddingsResponse(R"({"data":[{"embedding":"AACAPw=="}]})");
  ASSERT_TRUE(b64.ok()) << b64.status().ToString();
  EXPECT_EQ(b64->vectors, 1);
  EXPECT_EQ(b64->dimension, -1);
  EXPECT_EQ(b64->prompt_tokens, -1);
}

TEST(EmbeddingsResponseTest, MalformedAnswersNameWhatIsWrong) {
  const std::pair<const char*, const char*> cases[] = {
      {"{\"data\": [", "not valid JSON"},
      {"[1, 2]", "expected a JSON object, got array"},
      {R"({"object":"list"})", "no \"data\" array"},
      {R"({"data":{"embedding":[1]}})", "data: expected an array, got object"},
      {R"({"data":[{"embedding":[1,0]},7]})", "data[1]: expected an object, got number"},
      {R"({"data":[{"index":0}]})", "data[0]: no \"embedding\""},
      {R"({"data":[{"embedding":[1,"x"]}]})", "data[0].embedding: expected numbers, got string"},
      {R"({"data":[{"embedding":{"v":1}}]})", "data[0].embedding: expected an array of numbers or a base64 string"},
      {R"({"data":[{"embedding":[]}]})", "data[0].embedding: empty"},
      {R"({"data":[{"embedding":[1,0]},{"embedding":[1,0,0]}]})", "data[1].embedding: 3 numbers, data[0] had 2"},
      {R"({"data":[{"index":0,"embedding":[1]},{"index":0,"embedding":[1]}]})", "data[1].index: 0 is not a new index below 2"},
      {R"({"data":[{"index":5,"embedding":[1]}]})", "data[0].index: 5 is not a new index below 1"},
      {R"({"data":[{"index":"0","embedding":[1]}]})", "data[0].index: \"0\" is not a new index"},
      {R"({"error":{"type":"invalid_request_error","message":"input is too long"}})",
       "error object in the embeddings answer: invalid_request_error: input is too long"},
  };
  for (const auto& [body, want] : cases) {
    Result<EmbeddingsResponse> r = ParseEmbeddingsResponse(body);
    ASSERT_FALSE(r.ok()) << body;
    EXPECT_EQ(r.status().code(), Status::Code::kProtocolError) << body;
    EXPECT_THAT(r.status().message(), HasSubstr(want)) << body;
  }
}

// Runs one answer through EmbeddingsHandler -> RecordingHandler, as the transport does.
metrics::RequestRecord Record(int32_t inputs, const std::string& body, int status = 200) {
  metrics::RequestRecord rec;
  rec.items = inputs;
  return testing::RecordAnswer([&](RecordingHandler* inner) { return EmbeddingsHandler(inner, inputs); }, body, status,
                               {}, rec);
}

TEST(EmbeddingsResponseTest, HandlerRecordsUsageAndTheEndOfTheAnswer) {
  metrics::RequestRecord r = Record(2, kTwo);
  EXPECT_TRUE(r.ok()) << r.error_message;
  EXPECT_EQ(r.t_send, 100);
  EXPECT_EQ(r.t_first_byte, 250);
  EXPECT_EQ(r.t_end, 400);
  EXPECT_EQ(r.prompt_tokens, 7);
  EXPECT_EQ(r.completion_tokens, 0);
  EXPECT_TRUE(r.chunks.empty());
}

TEST(EmbeddingsResponseTest, WrongVectorCountIsAMismatchAndGarbageAProtocolError) {
  metrics::RequestRecord r = Record(3, kTwo);
  EXPECT_EQ(r.error, metrics::ErrorClass::kMismatch);
  EXPECT_EQ(r.error_message, "embeddings answer has 2 vectors for 3 inputs");
  EXPECT_EQ(metrics::ErrorClassName(r.error), "mismatch");

  metrics::RequestRecord g = Record(1, "<html>oops</html>");
  EXPECT_EQ(g.error, metrics::ErrorClass::kProtocol);
  EXPECT_THAT(g.error_message, HasSubstr("not valid JSON"));

  // An HTTP error keeps the client's class and message; the body is not parsed.
  metrics::RequestRecord e = Record(1, R"({"error":{"message":"bad"}})", 400);
  EXPECT_EQ(e.error, metrics::ErrorClass::kHttp4xx);
  EXPECT_EQ(e.error_message, "HTTP 400");
}

// A raw capture of llama.cpp b4748's /v1/embeddings (testdata/llamacpp-b4748-embeddings/,
// PROVENANCE.txt): the status and the body after the headers.
std::pair<int, std::string> LlamaCapture(const std::string& name) {
  const std::string path = infereng::testing::SourceDir() + "/src/client/testdata/llamacpp-b4748-embeddings/" + name;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    ADD_FAILURE() << "missing capture " << path;
    return {0, ""};
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  const std::string raw = ss.str();
  const size_t split = raw.find("\r\n\r\n");
  if (split == std::string::npos || raw.rfind("HTTP/1.1 ", 0) != 0) {
    ADD_FAILURE() << path << ": not a raw HTTP response";
    return {0, ""};
  }
  return {std::stoi(raw.substr(9, 3)), raw.substr(split + 4)};
}

TEST(EmbeddingsResponseTest, RealLlamaCppAnswersParse) {
  auto [status, body] = LlamaCapture("embeddings_v1.txt");  // two inputs, 13 tokens
  ASSERT_EQ(status, 200);
  Result<EmbeddingsResponse> two = ParseEmbeddingsResponse(body);
  ASSERT_TRUE(two.ok()) << two.status().ToString();
  EXPECT_EQ(two->vectors, 2);
  EXPECT_EQ(two->dimension, 384);  // the model's n_embd
  EXPECT_EQ(two->prompt_tokens, 13);
  metrics::RequestRecord r = Record(2, body);
  EXPECT_TRUE(r.ok()) << r.error_message;
  EXPECT_EQ(r.prompt_tokens, 13);
  EXPECT_EQ(Record(3, body).error, metrics::ErrorClass::kMismatch);

  auto [status1, body1] = LlamaCapture("embeddings_v1_single_string.txt");
  ASSERT_EQ(status1, 200);
  Result<EmbeddingsResponse> one = ParseEmbeddingsResponse(body1);
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  EXPECT_EQ(one->vectors, 1);
  EXPECT_EQ(one->prompt_tokens, 3);

  // Its 400s are OpenAI-shaped error objects: named as such if they ever came with a 200.
  for (const char* name : {"embeddings_v1_empty_list.txt", "embeddings_v1_missing_input.txt"}) {
    auto [code, err] = LlamaCapture(name);
    EXPECT_EQ(code, 400) << name;
    Result<EmbeddingsResponse> e = ParseEmbeddingsResponse(err);
    ASSERT_FALSE(e.ok()) << name;
    EXPECT_THAT(e.status().message(), HasSubstr("error object in the embeddings answer: invalid_request_error: ")) << name;
  }
}

}  // namespace
}  // namespace infereng::client
