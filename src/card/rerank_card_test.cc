// A rerank card (product.modality: rerank): what it accepts (documents, document_tokens),
// what it defaults (bench.endpoint rerank), and the FILE:LINE errors for what only makes
// sense elsewhere.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "card/card_parser.h"
#include "card/gaps.h"
#include "testing/card_refusals.h"
#include "testing/paths.h"

namespace infereng::card {
namespace {

using ::testing::HasSubstr;

constexpr const char* kCard = R"(name: rr
product:
  modality: rerank
traffic:
  arrival: 20rps
  input_tokens: {fixed: 12}
  documents: {uniform: [5, 40]}
  document_tokens: {lognormal: {p50: 150, p99: 400}}
slo:
  e2e: {p99: 300ms}
)";

TEST(RerankCardTest, ParsesDocumentsAndBenchesOnTheRerankEndpoint) {
  auto card = ParseCard(kCard, "r.yaml");
  ASSERT_TRUE(card.ok()) << card.status().ToString();
  EXPECT_EQ(card->product.modality, "rerank");
  EXPECT_TRUE(card->product.PrefillOnly());
  EXPECT_EQ(card->bench.endpoint, "rerank");  // the default for this modality
  ASSERT_TRUE(card->traffic.documents.has_value());
  EXPECT_EQ(card->traffic.documents->kind, Distribution::Kind::kUniform);
  EXPECT_EQ(card->traffic.documents->max, 40);
  ASSERT_TRUE(card->traffic.document_tokens.has_value());
  EXPECT_EQ(card->traffic.document_tokens->kind, Distribution::Kind::kLognormal);
  EXPECT_FALSE(card->traffic.batch_size.has_value());
  EXPECT_TRUE(ParseCard(std::string(kCard) + "bench: {endpoint: rerank}\n", "r.yaml").ok());
}

void ExpectRefused(const std::vector<testing::CardRefusal>& cases) { testing::ExpectCardsRefused(cases, "r.yaml"); }

TEST(RerankCardTest, GenerationAndEmbeddingsFieldsAreErrorsNamingTheirLine) {
  const std::string head = "product:\n  modality: rerank\n";  // lines 1-2
  ExpectRefused({
      {head + "traffic:\n  output_tokens: 8\n", "r.yaml:4: traffic.output_tokens", "does not apply to a rerank card"},
      {head + "slo:\n  ttft: {p99: 200ms}\n", "r.yaml:4: slo.ttft", "a rerank request has no token stream"},
      {head + "slo:\n  goodput: {itl: 30ms}\n", "r.yaml:4: slo.goodput.itl", "only an e2e threshold"},
      {head + "bench:\n  endpoint: embeddings\n", "r.yaml:4: bench.endpoint", "must be rerank on a rerank card"},
      {head + "traffic:\n  documents: 1001\n", "r.yaml:4: traffic.documents", "at most 1000 documents"},
      {head + "traffic:\n  documents: {uniform: [1, 5000]}\n", "r.yaml:4: traffic.documents.max", "at most 1000"},
      {head + "traffic:\n  documents: 0\n", "r.yaml:4: traffic.documents", "between 1"},
      {head + "traffic:\n  document_tokens: 0\n", "r.yaml:4: traffic.document_tokens", "between 1"},
      {head + "traffic:\n  batch_size: 8\n", "r.yaml:4: traffic.batch_size", "only applies to an embeddings card"},
      {head + "traffic:\n  sessions: {turns: 3}\n", "r.yaml:4: traffic.sessions", "does not apply to a rerank card"},
      {head + "traffic:\n  prefix: {share: 0.5, tokens: 10}\n", "r.yaml:4: traffic.prefix", "not modelled for rerank"},
  });
}

TEST(RerankCardTest, RerankFieldsNeedTheModality) {
  ExpectRefused({
      {"product:\n  modality: reranker\n", "r.yaml:2: product.modality", "spelled \"rerank\""},
      {"traffic:\n  documents: 8\n", "r.yaml:2: traffic.documents", "only applies to a rerank card"},
      {"traffic:\n  document_tokens: 8\n", "r.yaml:2: traffic.document_tokens", "only applies to a rerank card"},
      {"bench:\n  endpoint: rerank\n", "r.yaml:2: bench.endpoint", "needs product.modality: rerank"},
      {"product:\n  modality: embeddings\nbench:\n  endpoint: rerank\n", "r.yaml:4: bench.endpoint",
       "must be embeddings on an embeddings card"},
  });
}

TEST(RerankCardTest, TheExampleCardParses) {
  auto card = LoadCardFile(testing::SourceDir() + "/examples/rerank.yaml");
  ASSERT_TRUE(card.ok()) << card.status().ToString();
  EXPECT_EQ(card->product.modality, "rerank");
  EXPECT_EQ(card->bench.endpoint, "rerank");
  ASSERT_TRUE(card->traffic.documents.has_value());
  EXPECT_TRUE(card->Assumed("traffic.documents"));
  EXPECT_TRUE(card->Assumed("traffic.document_tokens"));
}

TEST(RerankCardTest, CardCheckAsksForDocumentsNotForGenerationFields) {
  auto card = ParseCard("product: {modality: rerank}\ntraffic: {arrival: 5rps, input_tokens: 16}\n", "r.yaml");
  ASSERT_TRUE(card.ok()) << card.status().ToString();
  std::vector<std::string> missing;
  for (const Gap& g : FindGaps(*card)) {
    if (g.kind == Gap::Kind::kMissing) missing.push_back(g.path);
  }
  EXPECT_THAT(missing, ::testing::Contains("traffic.documents"));
  EXPECT_THAT(missing, ::testing::Contains("traffic.document_tokens"));
  EXPECT_THAT(missing, ::testing::Contains("slo.e2e"));
  for (const char* never : {"traffic.output_tokens", "product.streaming", "slo.ttft", "traffic.batch_size", "quality.eval_set"}) {
    EXPECT_THAT(missing, ::testing::Not(::testing::Contains(never))) << never;
  }
}

}  // namespace
}  // namespace infereng::card
