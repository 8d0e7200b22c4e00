// POST /v1/embeddings on the embedded engine: the body parser's 400s (naming the field),
// the deterministic unit vectors, and the round trip over HTTP on 127.0.0.1 with the
// engine's prefill timing in the answer.
#include "serve/embeddings.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "serve/http_test_client.h"
#include "serve/paced_engine.h"
#include "serve/request_parser.h"
#include "serve/server.h"

namespace infereng::serve {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

const ParseLimits kLimits{.model_name = "m", .max_model_len = 100, .default_max_tokens = 16};

TEST(ServeEmbeddings, ParsesAStringOrAListOfStrings) {
  EmbeddingsOutcome one = ParseEmbeddingsRequest(R"({"model":"m","input":"a b c"})", kLimits);
  ASSERT_FALSE(one.error) << one.error->message;
  ASSERT_EQ(one.params.inputs.size(), 1u);
  EXPECT_EQ(one.params.prompt_tokens, 3);
  EXPECT_EQ(one.params.dimensions, kEmbeddingDimension);

  EmbeddingsOutcome list = ParseEmbeddingsRequest(
      R"({"input":["a b","c d e","f"],"encoding_format":"float","dimensions":8,"user":"u"})", kLimits);
  ASSERT_FALSE(list.error) << list.error->message;
  ASSERT_EQ(list.params.inputs.size(), 3u);
  EXPECT_EQ(list.params.inputs[1].size(), 3u);
  EXPECT_EQ(list.params.prompt_tokens, 6);
  EXPECT_EQ(list.params.dimensions, 8);
}

TEST(ServeEmbeddings, BadBodiesAre400sNamingTheField) {
  std::string words;
  for (int i = 0; i < 100; ++i) words += "w ";
  std::string half;
  for (int i = 0; i < 60; ++i) half += "w ";
  struct Case {
    std::string body;
    std::string param;
    std::string message;
  };
  const Case cases[] = {
      {R"({"model":"m"})", "input", "input: required"},
      {R"({"input":[]})", "input", "must not be an empty list"},
      {R"({"input":["a",7]})", "input", "input[1]: expected a string, got number"},
      {R"({"input":[[1,2,3]]})", "input", "token-id inputs are not supported"},
      {R"({"input":{"text":"a"}})", "input", "expected a string or an array of strings, got object"},
      {R"({"input":["a",""]})", "input", "input[1]: is empty (0 tokens)"},
      {R"({"input":")" + words + R"("})", "input", "input: 100 tokens; this model's maximum context length is 100"},
      {R"({"input":[")" + half + R"(",")" + half + R"("]})", "input", "120 tokens in total"},
      {R"({"input":"a","encoding_format":"base64"})", "encoding_format", "only \"float\""},
      {R"({"input":"a","dimensions":0})", "dimensions", "between 1 and 384, got 0"},
      {R"({"input":"a","dimensions":"big"})", "dimensions", "expected an integer"},
      {R"({"input":"a","user":5})", "user", "user: expected a string"},
      {R"([1])", "", "must be a JSON object"},
  };
  for (const Case& c : cases) {
    EmbeddingsOutcome o = ParseEmbeddingsRequest(c.body, kLimits);
    ASSERT_TRUE(o.error.has_value()) << c.body;
    EXPECT_EQ(o.error->http_status, 400) << c.body;
    EXPECT_EQ(o.error->param, c.param) << c.body;
    EXPECT_THAT(o.error->message, HasSubstr(c.message)) << c.body;
  }
  std::string many = R"({"input":[)";
  for (int i = 0; i < 2049; ++i) many += std::string(i ? "," : "") + "\"a\"";
  EmbeddingsOutcome o = ParseEmbeddingsRequest(many + "]}", ParseLimits{.model_name = "", .max_model_len = 1 << 20, .default_max_tokens = 16});
  ASSERT_TRUE(o.error.has_value());
  EXPECT_THAT(o.error->message, HasSubstr("at most 2048 inputs per request, got 2049"));
  // Another model's name is a 404, as for completions.
  EmbeddingsOutcome m = ParseEmbeddingsRequest(R"({"model":"other","input":"a"})", kLimits);
  ASSERT_TRUE(m.error.has_value());
  EXPECT_EQ(m.error->http_status, 404);
}

double Norm(const std::vector<float>& v) {
  double s = 0;
  for (float x : v) s += static_cast<double>(x) * x;
  return std::sqrt(s);
}

TEST(ServeEmbeddings, VectorsAreUnitLengthAndAFunctionOfTheText) {
  const std::vector<uint32_t> a = {1, 2, 3}, b = {1, 2, 4};
  const std::vector<float> va = EmbeddingVector(a, kEmbeddingDimension);
  ASSERT_EQ(va.size(), 384u);
  EXPECT_NEAR(Norm(va), 1.0, 1e-6);
  EXPECT_EQ(EmbeddingVector(a, kEmbeddingDimension), va);
  EXPECT_NE(EmbeddingVector(b, kEmbeddingDimension), va);
  const std::vector<float> cut = EmbeddingVector(a, 16);
  ASSERT_EQ(cut.size(), 16u);
  EXPECT_NEAR(Norm(cut), 1.0, 1e-6);
}

TEST(ServeEmbeddings, RoundTripOverHttpAnswersOneVectorPerInputAfterThePrefill) {
  ServerOptions so;
  so.port = 0;
  so.model_name = "emb";
  // Prefill = 4 ms + 1 ms per token, in engine time (the answer's timings say so exactly).
  PacedEngineOptions po{.ttft_base = 4 * kNanosPerMilli, .prefill_per_token = kNanosPerMilli, .itl = kNanosPerMilli};
  Server server(so, std::make_unique<PacedEngine>(po));
  Result<uint16_t> port = server.Start();
  ASSERT_TRUE(port.ok()) << port.status().ToString();

  auto post = [&](const json& body) {
    testing::TestClient c(*port);
    return c.Call("POST", "/v1/embeddings", body.dump());
  };
  testing::TestResponse r = post({{"model", "emb"}, {"input", {"one two three", "four five", "one two three"}}});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.Header("content-type"), "application/json");
  json j = json::parse(r.body);
  EXPECT_EQ(j["object"], "list");
  EXPECT_EQ(j["model"], "emb");
  ASSERT_EQ(j["data"].size(), 3u);
  std::vector<std::vector<float>> vecs;
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(j["data"][i]["object"], "embedding");
    EXPECT_EQ(j["data"][i]["index"], i);
    vecs.push_back(j["data"][i]["embedding"].get<std::vector<float>>());
    ASSERT_EQ(vecs.back().size(), 384u);
    EXPECT_NEAR(Norm(vecs.back()), 1.0, 1e-5);
  }
  EXPECT_EQ(vecs[0], vecs[2]);  // the same text, the same vector
  EXPECT_NE(vecs[0], vecs[1]);
  EXPECT_EQ(j["usage"]["prompt_tokens"], 8);
  EXPECT_EQ(j["usage"]["total_tokens"], 8);
  EXPECT_DOUBLE_EQ(j["timings"]["prompt_ms"].get<double>(), 4 + 8);  // grows with batch x tokens
  EXPECT_EQ(j["timings"]["prompt_n"], 8);
  EXPECT_FALSE(j["timings"].contains("predicted_ms"));

  testing::TestResponse bad = post({{"input", {"a", 3}}});
  ASSERT_EQ(bad.status, 400) << bad.body;
  json e = json::parse(bad.body);
  EXPECT_EQ(e["error"]["param"], "input");
  EXPECT_THAT(e["error"]["message"].get<std::string>(), HasSubstr("input[1]: expected a string"));

  // GET is refused with the method to use.
  testing::TestClient c(*port);
  EXPECT_EQ(c.Call("GET", "/v1/embeddings").status, 405);
  server.Stop();
}

}  // namespace
}  // namespace infereng::serve
