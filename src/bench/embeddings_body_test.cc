// The embeddings endpoint on the bench side: its name and path, the request body, the
// target URL that names it, and the load plan's check against the card's modality.
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

TEST(EmbeddingsBodyTest, BodyListsTheInputsInOrderWithoutStreamOrMaxTokens) {
  BodyOptions o{.model = "emb", .endpoint = ApiEndpoint::kEmbeddings, .caps = {}};
  nlohmann::json j = nlohmann::json::parse(BuildEmbeddingsBody(o, {"the time", "people water", "a"}));
  EXPECT_EQ(j["model"], "emb");
  EXPECT_EQ(j["input"], nlohmann::json::array({"the time", "people water", "a"}));
  EXPECT_EQ(j["encoding_format"], "float");
  EXPECT_FALSE(j.contains("stream"));
  EXPECT_FALSE(j.contains("max_tokens"));
  EXPECT_STREQ(EndpointPath(ApiEndpoint::kEmbeddings), "/v1/embeddings");
}

TEST(EmbeddingsBodyTest, EndpointNamesTargetsAndTheCardAgree) {
  for (ApiEndpoint e : {ApiEndpoint::kChat, ApiEndpoint::kCompletions, ApiEndpoint::kEmbeddings, ApiEndpoint::kRerank,
                        ApiEndpoint::kTranscriptions}) {
    Result<ApiEndpoint> back = ParseApiEndpoint(ApiEndpointName(e), "--endpoint");
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(*back, e);
  }
  Result<ApiEndpoint> bad = ParseApiEndpoint("vision", "--endpoint");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "--endpoint vision: expected chat, completions, embeddings, rerank or transcriptions");

  Result<Target> t = ParseTarget("http://127.0.0.1:8000/v1/embeddings");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->root, "http://127.0.0.1:8000");
  EXPECT_EQ(t->endpoint, "embeddings");

  auto emb = card::ParseCard("product: {modality: embeddings}\ntraffic: {arrival: 1rps, input_tokens: 8}\n", "e.yaml");
  ASSERT_TRUE(emb.ok()) << emb.status().ToString();
  BenchOptions o;
  o.card = *emb;
  Result<LoadPlan> plan = ResolveLoadPlan(o);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->endpoint, ApiEndpoint::kEmbeddings);
  o.endpoint = "chat";
  Result<LoadPlan> chat = ResolveLoadPlan(o);
  ASSERT_FALSE(chat.ok());
  EXPECT_THAT(chat.status().message(), HasSubstr("product.modality is embeddings (use --endpoint embeddings)"));
}

}  // namespace
}  // namespace infereng::bench
