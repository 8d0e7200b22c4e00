// The /v1/rerank answer: parsed into what a benchmark needs (vLLM/Jina, llama.cpp and TEI
// shapes), every index checked against the documents sent, and the count checked against
// the request by RerankHandler before the record is final.
#include "client/rerank_response.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "client/answer_test_util.h"
#include "testing/paths.h"

namespace infereng::client {
namespace {

using ::testing::HasSubstr;

constexpr const char* kVllm =
    R"({"id":"rerank-1","model":"m","usage":{"total_tokens":40},"results":[)"
    R"({"index":2,"document":{"text":"c"},"relevance_score":0.9},{"index":0,"document":{"text":"a"},"relevance_score":0.4}]})";

TEST(RerankResponseTest, VllmShapeGivesCountUsageAndOrder) {
  Result<RerankResponse> r = ParseRerankResponse(kVllm, 3);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->results, 2);
  EXPECT_EQ(r->prompt_tokens, 40);  // total_tokens when there is no prompt_tokens
  EXPECT_TRUE(r->sorted);
  // llama.cpp's: prompt_tokens wins, document order (not sorted), negative raw scores.
  Result<RerankResponse> l = ParseRerankResponse(
      R"({"model":"m","object":"list","usage":{"prompt_tokens":33,"total_tokens":34},"results":[)"
      R"({"index":0,"relevance_score":-2.5},{"index":1,"relevance_score":3}]})",
      2);
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  EXPECT_EQ(l->results, 2);
  EXPECT_EQ(l->prompt_tokens, 33);
  EXPECT_FALSE(l->sorted);
  // TEI's bare array: no usage (-1, not 0).
  Result<RerankResponse> t = ParseRerankResponse(R"([{"index":1,"score":0.7},{"index":0,"score":0.1}])", 2);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->results, 2);
  EXPECT_EQ(t->prompt_tokens, -1);
  // No documents back at all is a valid (empty) answer; the handler judges the count.
  Result<RerankResponse> none = ParseRerankResponse(R"({"results":[]})", 4);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->results, 0);
}

TEST(RerankResponseTest, MalformedAnswersNameWhatIsWrong) {
  const std::pair<const char*, const char*> cases[] = {
      {"{\"results\": [", "not valid JSON"},
      {"\"ok\"", "expected a JSON object or array, got string"},
      {R"({"object":"list"})", "no \"results\" array"},
      {R"({"results":{"index":0}})", "results: expected an array, got object"},
      {R"({"results":[{"index":0,"relevance_score":1},7]})", "results[1]: expected an object, got number"},
      {R"({"results":[{"relevance_score":1}]})", "results[0]: no \"index\""},
      {R"({"results":[{"index":0}]})", "results[0]: no \"relevance_score\" (or \"score\")"},
      {R"({"results":[{"index":0,"relevance_score":"high"}]})", "results[0].relevance_score: expected a finite number"},
      {R"({"results":[{"index":0,"relevance_score":null}]})", "results[0].relevance_score: expected a finite number"},
      {R"({"results":[{"index":3,"relevance_score":1}]})", "results[0].index: 3 is not a new index below 3"},
      {R"({"results":[{"index":-1,"relevance_score":1}]})", "results[0].index: -1 is not a new index"},
      {R"({"results":[{"index":1.5,"relevance_score":1}]})", "results[0].index: 1.5 is not a new index"},
      {R"({"results":[{"index":"0","relevance_score":1}]})", "results[0].index: \"0\" is not a new index"},
      {R"({"results":[{"index":1,"relevance_score":1},{"index":1,"relevance_score":0}]})",
       "results[1].index: 1 is not a new index below 3"},
      {R"([{"index":0,"score":1},{"index":9,"score":0}])", "answer[1].index: 9 is not a new index below 3"},
      {R"({"error":{"type":"invalid_request_error","message":"query is required"}})",
       "error object in the rerank answer: invalid_request_error: query is required"},
      {R"({"error":"model not loaded"})", "error object in the rerank answer: model not loaded"},
  };
  for (const auto& [body, want] : cases) {
    Result<RerankResponse> r = ParseRerankResponse(body, 3);
    ASSERT_FALSE(r.ok()) << body;
    EXPECT_EQ(r.status().code(), Status::Code::kProtocolError) << body;
    EXPECT_THAT(r.status().message(), HasSubstr(want)) << body;
  }
}

// Runs one answer through RerankHandler -> RecordingHandler, as the transport does.
metrics::RequestRecord Record(int32_t documents, int32_t expected, const std::string& body, int status = 200) {
  metrics::RequestRecord rec;
  rec.items = documents;
  return testing::RecordAnswer([&](RecordingHandler* inner) { return RerankHandler(inner, documents, expected); }, body,
                               status, {}, rec);
}

TEST(RerankResponseTest, HandlerRecordsUsageAndChecksTheCount) {
  metrics::RequestRecord r = Record(3, 2, kVllm);  // top_n 2 of 3 documents
  EXPECT_TRUE(r.ok()) << r.error_message;
  EXPECT_EQ(r.t_end, 400);
  EXPECT_EQ(r.prompt_tokens, 40);
  EXPECT_EQ(r.completion_tokens, 0);
  EXPECT_TRUE(r.chunks.empty());

  metrics::RequestRecord m = Record(3, 3, kVllm);  // all 3 expected, 2 came back
  EXPECT_EQ(m.error, metrics::ErrorClass::kMismatch);
  EXPECT_EQ(m.error_message, "rerank answer has 2 results for 3 documents (expected 3)");

  metrics::RequestRecord g = Record(2, 2, kVllm);  // index 2 of 2 documents
  EXPECT_EQ(g.error, metrics::ErrorClass::kProtocol);
  EXPECT_THAT(g.error_message, HasSubstr("results[0].index: 2 is not a new index below 2"));

  metrics::RequestRecord e = Record(1, 1, R"({"error":{"message":"bad"}})", 400);
  EXPECT_EQ(e.error, metrics::ErrorClass::kHttp4xx);
  EXPECT_EQ(e.error_message, "HTTP 400");
}

std::string Fixture(const std::string& name) {
  const std::string path = infereng::testing::SourceDir() + "/src/client/testdata/rerank-shapes/" + name;
  std::ifstream in(path, std::ios::binary);
  if (!in) ADD_FAILURE() << "missing fixture " << path;
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The engines' shapes, written from their source (testdata/rerank-shapes/PROVENANCE.txt).
TEST(RerankResponseTest, TheEnginesShapesParse) {
  Result<RerankResponse> l = ParseRerankResponse(Fixture("llamacpp_v1_rerank.json"), 3);
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  EXPECT_EQ(l->results, 3);
  EXPECT_EQ(l->prompt_tokens, 61);
  EXPECT_FALSE(l->sorted);  // document order
  EXPECT_TRUE(Record(3, 3, Fixture("llamacpp_v1_rerank.json")).ok());

  Result<RerankResponse> v = ParseRerankResponse(Fixture("vllm_v1_rerank_top_n2.json"), 3);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(v->results, 2);
  EXPECT_EQ(v->prompt_tokens, 61);
  EXPECT_TRUE(v->sorted);

  Result<RerankResponse> t = ParseRerankResponse(Fixture("tei_rerank.json"), 3);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->results, 3);
  EXPECT_EQ(t->prompt_tokens, -1);
  EXPECT_FALSE(ParseRerankResponse(Fixture("tei_rerank.json"), 2).ok());  // index 2 of 2 documents
}

}  // namespace
}  // namespace infereng::client
