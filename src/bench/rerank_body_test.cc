// The rerank endpoint on the bench side: its name and path, the request body, the target
// URLs that name it (/v1/rerank, /rerank, /v2/rerank), and the load plan's check against the
// card's modality.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "bench/load_plan.h"
#include "bench/request_body.h"
#include "bench/target.h"
#include "card/card_parser.h"

namespace infereng::bench {
namespace {

using ::testing::HasSubstr;

TEST(RerankBodyTest, BodyHasTheQueryAndTheDocumentsInOrderAndNoTopN) {
  BodyOptions o{.model = "rr", .endpoint = ApiEndpoint::kRerank, .caps = {}};
  nlohmann::json j = nlohmann::json::parse(BuildRerankBody(o, "what", {"the time", "people water", "a"}));
  EXPECT_EQ(j["model"], "rr");
  EXPECT_EQ(j["query"], "what");
  EXPECT_EQ(j["documents"], nlohmann::json::array({"the time", "people water", "a"}));
  for (const char* key : {"top_n", "stream", "max_tokens", "input"}) EXPECT_FALSE(j.contains(key)) << key;
  EXPECT_STREQ(EndpointPath(ApiEndpoint::kRerank), "/v1/rerank");
  EXPECT_STREQ(ApiEndpointName(ApiEndpoint::kRerank), "rerank");
  EXPECT_TRUE(PrefillOnly(ApiEndpoint::kRerank));
  EXPECT_FALSE(PrefillOnly(ApiEndpoint::kChat));
}

TEST(RerankBodyTest, TargetsAndTheCardAgree) {
  Result<ApiEndpoint> back = ParseApiEndpoint("rerank", "--endpoint");
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, ApiEndpoint::kRerank);
  for (const char* url : {"http://127.0.0.1:8000/v1/rerank", "http://127.0.0.1:8000/rerank", "http://127.0.0.1:8000/v2/rerank/"}) {
    Result<Target> t = ParseTarget(url);
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    EXPECT_EQ(t->root, "http://127.0.0.1:8000") << url;
    EXPECT_EQ(t->endpoint, "rerank") << url;
  }

  auto rr = card::ParseCard(
      "product: {modality: rerank}\ntraffic: {arrival: 1rps, input_tokens: 8, documents: 4, document_tokens: 32}\n", "r.yaml");
  ASSERT_TRUE(rr.ok()) << rr.status().ToString();
  BenchOptions o;
  o.card = *rr;
  Result<LoadPlan> plan = ResolveLoadPlan(o);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->endpoint, ApiEndpoint::kRerank);
  for (const char* other : {"chat", "embeddings"}) {
    o.endpoint = other;
    Result<LoadPlan> bad = ResolveLoadPlan(o);
    ASSERT_FALSE(bad.ok()) << other;
    EXPECT_THAT(bad.status().message(), HasSubstr("product.modality is rerank (use --endpoint rerank)"));
  }
  // The one rule, each way round.
  EXPECT_TRUE(EndpointFitsCard(ApiEndpoint::kRerank, rr->product));
  for (ApiEndpoint e : {ApiEndpoint::kChat, ApiEndpoint::kCompletions, ApiEndpoint::kEmbeddings}) {
    EXPECT_FALSE(EndpointFitsCard(e, rr->product)) << ApiEndpointName(e);
  }
  EXPECT_FALSE(EndpointFitsCard(ApiEndpoint::kRerank, card::ProductSpec{}));
  EXPECT_TRUE(EndpointFitsCard(ApiEndpoint::kChat, card::ProductSpec{}));
  auto text = card::ParseCard("traffic: {arrival: 1rps, input_tokens: 8, output_tokens: 8}\n", "t.yaml");
  ASSERT_TRUE(text.ok());
  o.card = *text;
  o.endpoint = "rerank";
  Result<LoadPlan> on_text = ResolveLoadPlan(o);
  ASSERT_FALSE(on_text.ok());
  EXPECT_THAT(on_text.status().message(), HasSubstr("product.modality is text (rerank needs a rerank card)"));

  // Transcriptions: only on a transcription card, and such a card only there.
  o.endpoint = "transcriptions";
  Result<LoadPlan> asr_on_text = ResolveLoadPlan(o);
  ASSERT_FALSE(asr_on_text.ok());
  EXPECT_THAT(asr_on_text.status().message(),
              HasSubstr("product.modality is text (transcriptions needs a transcription card)"));
  EXPECT_FALSE(EndpointFitsCard(ApiEndpoint::kTranscriptions, card::ProductSpec{}));
  card::ProductSpec asr;
  asr.modality = "transcription";
  EXPECT_TRUE(EndpointFitsCard(ApiEndpoint::kTranscriptions, asr));
  for (ApiEndpoint e : {ApiEndpoint::kChat, ApiEndpoint::kCompletions, ApiEndpoint::kEmbeddings, ApiEndpoint::kRerank}) {
    EXPECT_FALSE(EndpointFitsCard(e, asr)) << ApiEndpointName(e);
  }
}

}  // namespace
}  // namespace infereng::bench
