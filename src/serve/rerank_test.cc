// POST /v1/rerank (and /rerank) on the embedded engine: the body parser's 400s (naming the
// field), the deterministic scores in (0, 1), and the round trip over HTTP on 127.0.0.1:
// top_n results sorted by score, usage = Σ (query + document) tokens, the engine's prefill
// of those tokens in the answer's timings.
#include "serve/rerank.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>

#include "serve/http_test_client.h"
#include "serve/paced_engine.h"
#include "serve/request_parser.h"
#include "serve/server.h"

namespace infereng::serve {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

const ParseLimits kLimits{.model_name = "m", .max_model_len = 100, .default_max_tokens = 16};

TEST(ServeRerank, ParsesQueryDocumentsAndTopN) {
  RerankOutcome o = ParseRerankRequest(
      R"({"model":"m","query":"a b","documents":["c d e","f","g h"],"top_n":2,"return_documents":false,"user":"u"})",
      kLimits);
  ASSERT_FALSE(o.error) << o.error->message;
  EXPECT_EQ(o.params.query.size(), 2u);
  ASSERT_EQ(o.params.documents.size(), 3u);
  EXPECT_EQ(o.params.documents[0].size(), 3u);
  EXPECT_EQ(o.params.texts[1], "f");
  EXPECT_EQ(o.params.prompt_tokens, (2 + 3) + (2 + 1) + (2 + 2));
  EXPECT_EQ(o.params.top_n, 2);
  EXPECT_FALSE(o.params.return_documents);
  // No top_n, or more than the documents: all of them.
  RerankOutcome all = ParseRerankRequest(R"({"query":"q","documents":["a","b"]})", kLimits);
  ASSERT_FALSE(all.error);
  EXPECT_EQ(all.params.top_n, 2);
  EXPECT_TRUE(all.params.return_documents);
  RerankOutcome big = ParseRerankRequest(R"({"query":"q","documents":["a","b"],"top_n":50})", kLimits);
  ASSERT_FALSE(big.error);
  EXPECT_EQ(big.params.top_n, 2);
}

TEST(ServeRerank, BadBodiesAre400sNamingTheField) {
  std::string words;
  for (int i = 0; i < 98; ++i) words += "w ";
  std::string thirty;
  for (int i = 0; i < 30; ++i) thirty += "w ";
  struct Case {
    std::string body;
    std::string param;
    std::string message;
  };
  const Case cases[] = {
      {R"({"documents":["a"]})", "query", "query: required"},
      {R"({"query":7,"documents":["a"]})", "query", "query: expected a string, got number"},
      {R"({"query":"","documents":["a"]})", "query", "query: is empty"},
      {R"({"query":"q"})", "documents", "documents: required"},
      {R"({"query":"q","texts":["a"]})", "texts", "not TEI's \"texts\""},
      {R"({"query":"q","documents":"a"})", "documents", "expected an array of strings, got string"},
      {R"({"query":"q","documents":[]})", "documents", "must not be an empty list"},
      {R"({"query":"q","documents":["a",3]})", "documents", "documents[1]: expected a string, got number"},
      {R"({"query":"q","documents":[{"text":"a"}]})", "documents", "documents[0]: expected a string, got object"},
      {R"({"query":"q","documents":["a",""]})", "documents", "documents[1]: is empty (0 tokens)"},
      {R"({"query":"q q","documents":[")" + words + R"("]})", "documents",
       "documents[0]: the query and this document are 100 tokens; this model's maximum context length is 100"},
      {R"({"query":"q","documents":[")" + thirty + R"(",")" + thirty + R"(",")" + thirty + R"(",")" + thirty + R"("]})",
       "documents", "the pairs are 124 tokens in total"},
      {R"({"query":"q","documents":["a"],"top_n":0})", "top_n", "top_n: must be at least 1, got 0"},
      {R"({"query":"q","documents":["a"],"top_n":"all"})", "top_n", "expected an integer"},
      {R"({"query":"q","documents":["a"],"return_documents":"yes"})", "return_documents", "expected a boolean"},
      {R"({"query":"q","documents":["a"],"user":5})", "user", "user: expected a string"},
      {R"([1])", "", "must be a JSON object"},
  };
  for (const Case& c : cases) {
    RerankOutcome o = ParseRerankRequest(c.body, kLimits);
    ASSERT_TRUE(o.error.has_value()) << c.body;
    EXPECT_EQ(o.error->http_status, 400) << c.body;
    EXPECT_EQ(o.error->param, c.param) << c.body;
    EXPECT_THAT(o.error->message, HasSubstr(c.message)) << c.body;
  }
  std::string many = R"({"query":"q","documents":[)";
  for (int i = 0; i < 1001; ++i) many += std::string(i ? "," : "") + "\"a\"";
  RerankOutcome o = ParseRerankRequest(many + "]}", ParseLimits{.model_name = "", .max_model_len = 1 << 20, .default_max_tokens = 16});
  ASSERT_TRUE(o.error.has_value());
  EXPECT_THAT(o.error->message, HasSubstr("at most 1000 per request, got 1001"));
  RerankOutcome m = ParseRerankRequest(R"({"model":"other","query":"q","documents":["a"]})", kLimits);
  ASSERT_TRUE(m.error.has_value());
  EXPECT_EQ(m.error->http_status, 404);
}

TEST(ServeRerank, ScoresAreInTheOpenUnitIntervalAndAFunctionOfThePair) {
  const std::vector<uint32_t> q = {1, 2}, a = {3, 4}, b = {3, 5};
  const double sa = RerankScore(q, a);
  EXPECT_GT(sa, 0);
  EXPECT_LT(sa, 1);
  EXPECT_EQ(RerankScore(q, a), sa);
  EXPECT_NE(RerankScore(q, b), sa);
  EXPECT_NE(RerankScore({1}, {2, 3, 4}), RerankScore({1, 2}, {3, 4}));  // the split matters
  std::set<double> seen;
  for (uint32_t i = 0; i < 200; ++i) {
    const double s = RerankScore(q, {i});
    EXPECT_GT(s, 0);
    EXPECT_LT(s, 1);
    seen.insert(s);
  }
  EXPECT_EQ(seen.size(), 200u);
}

TEST(ServeRerank, RoundTripOverHttpAnswersTopNByScoreAfterThePrefill) {
  ServerOptions so;
  so.port = 0;
  so.model_name = "rr";
  // Prefill = 4 ms + 1 ms per token, in engine time (the answer's timings say so exactly).
  PacedEngineOptions po{.ttft_base = 4 * kNanosPerMilli, .prefill_per_token = kNanosPerMilli, .itl = kNanosPerMilli};
  Server server(so, std::make_unique<PacedEngine>(po));
  Result<uint16_t> port = server.Start();
  ASSERT_TRUE(port.ok()) << port.status().ToString();

  auto post = [&](const std::string& path, const json& body) {
    testing::TestClient c(*port);
    return c.Call("POST", path, body.dump());
  };
  const std::vector<std::string> docs = {"one two three", "four five", "six", "seven eight nine ten"};
  testing::TestResponse r = post("/v1/rerank", {{"model", "rr"}, {"query", "what is it"}, {"documents", docs}, {"top_n", 3}});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.Header("content-type"), "application/json");
  json j = json::parse(r.body);
  EXPECT_EQ(j["model"], "rr");
  EXPECT_EQ(j["id"].get<std::string>().rfind("rerank-", 0), 0u) << j["id"];
  ASSERT_EQ(j["results"].size(), 3u);
  std::set<size_t> indices;
  double previous = 2;
  for (const json& res : j["results"]) {
    const size_t i = res["index"].get<size_t>();
    ASSERT_LT(i, docs.size());
    indices.insert(i);
    EXPECT_EQ(res["document"]["text"], docs[i]);
    const double s = res["relevance_score"].get<double>();
    EXPECT_GT(s, 0);
    EXPECT_LE(s, previous);  // highest first
    previous = s;
  }
  EXPECT_EQ(indices.size(), 3u);
  const int pairs = (3 + 3) + (3 + 2) + (3 + 1) + (3 + 4);
  EXPECT_EQ(j["usage"]["total_tokens"], pairs);
  EXPECT_EQ(j["usage"]["prompt_tokens"], pairs);
  EXPECT_DOUBLE_EQ(j["timings"]["prompt_ms"].get<double>(), 4 + pairs);  // one prefill of every pair
  EXPECT_EQ(j["timings"]["prompt_n"], pairs);
  EXPECT_FALSE(j["timings"].contains("predicted_ms"));

  // /rerank (vLLM's and TEI's path) is the same endpoint; the same pairs, the same scores.
  testing::TestResponse again = post("/rerank", {{"query", "what is it"}, {"documents", docs}, {"top_n", 3}});
  ASSERT_EQ(again.status, 200) << again.body;
  json k = json::parse(again.body);
  EXPECT_EQ(k["results"], j["results"]);

  testing::TestResponse bad = post("/v1/rerank", {{"query", "q"}, {"documents", {"a", 3}}});
  ASSERT_EQ(bad.status, 400) << bad.body;
  json e = json::parse(bad.body);
  EXPECT_EQ(e["error"]["param"], "documents");
  EXPECT_THAT(e["error"]["message"].get<std::string>(), HasSubstr("documents[1]: expected a string"));

  testing::TestClient c(*port);
  EXPECT_EQ(c.Call("GET", "/v1/rerank").status, 405);
  server.Stop();
}

}  // namespace
}  // namespace infereng::serve
