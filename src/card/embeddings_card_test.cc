// An embeddings card (product.modality: embeddings): what it accepts, what it defaults,
// and the FILE:LINE errors for everything that only makes sense for text generation.
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

constexpr const char* kCard = R"(name: embed
product:
  modality: embeddings
traffic:
  arrival: 20rps
  batch_size: {uniform: [1, 16]}
  input_tokens: {lognormal: {p50: 64, p99: 400}}
slo:
  e2e: {p99: 300ms}
)";

TEST(EmbeddingsCardTest, ParsesBatchSizeAndBenchesOnTheEmbeddingsEndpoint) {
  auto card = ParseCard(kCard, "e.yaml");
  ASSERT_TRUE(card.ok()) << card.status().ToString();
  EXPECT_EQ(card->product.modality, "embeddings");
  EXPECT_EQ(card->bench.endpoint, "embeddings");  // the default for this modality
  ASSERT_TRUE(card->traffic.batch_size.has_value());
  EXPECT_EQ(card->traffic.batch_size->kind, Distribution::Kind::kUniform);
  EXPECT_EQ(card->traffic.batch_size->max, 16);
  ASSERT_EQ(card->slo.latency.size(), 1u);
  EXPECT_EQ(card->slo.latency[0].metric, "e2e_ms");
  // An explicit endpoint that agrees is fine too.
  EXPECT_TRUE(ParseCard(std::string(kCard) + "bench: {endpoint: embeddings}\n", "e.yaml").ok());
}

void ExpectRefused(const std::vector<testing::CardRefusal>& cases) { testing::ExpectCardsRefused(cases, "e.yaml"); }

TEST(EmbeddingsCardTest, GenerationOnlyFieldsAreErrorsNamingTheirLine) {
  const std::string head = "product:\n  modality: embeddings\n";  // lines 1-2
  ExpectRefused({
      {head + "traffic:\n  output_tokens: 8\n", "e.yaml:4: traffic.output_tokens", "does not apply to an embeddings card"},
      {head + "slo:\n  ttft: {p99: 200ms}\n", "e.yaml:4: slo.ttft", "only e2e objectives"},
      {head + "slo:\n  tpot_ms: {p99: 20}\n", "e.yaml:4: slo.tpot_ms", "only e2e objectives"},
      {head + "slo:\n  goodput: {itl: 30ms}\n", "e.yaml:4: slo.goodput.itl", "only an e2e threshold"},
      {head + "bench:\n  endpoint: chat\n", "e.yaml:4: bench.endpoint", "must be embeddings on an embeddings card"},
      {head + "traffic:\n  batch_size: 4096\n", "e.yaml:4: traffic.batch_size", "at most 2048"},
      {head + "traffic:\n  batch_size: {uniform: [1, 5000]}\n", "e.yaml:4: traffic.batch_size.max", "at most 2048"},
      {head + "traffic:\n  batch_size: 0\n", "e.yaml:4: traffic.batch_size", "between 1"},
      {head + "traffic:\n  sessions: {turns: 3}\n", "e.yaml:4: traffic.sessions", "does not apply"},
      {head + "traffic:\n  prefix: {share: 0.5, tokens: 10}\n", "e.yaml:4: traffic.prefix", "not modelled for embeddings"},
  });
  // product.streaming is refused on the line it is written on (line 3, inside product).
  auto streaming = ParseCard("product:\n  modality: embeddings\n  streaming: true\n", "e.yaml");
  ASSERT_FALSE(streaming.ok());
  EXPECT_THAT(streaming.status().message(), HasSubstr("e.yaml:3: product.streaming: does not apply"));
}

TEST(EmbeddingsCardTest, ModalityValuesAreCheckedAndEmbeddingsFieldsNeedTheModality) {
  ExpectRefused({
      {"product:\n  modality: embedding\n", "e.yaml:2: product.modality", "spelled \"embeddings\""},
      {"product:\n  modality: vision\n", "e.yaml:2: product.modality", "images on chat requests are traffic.images"},
      {"product:\n  modality: video\n", "e.yaml:2: product.modality", "not supported yet"},
      {"product:\n  modality: smell\n", "e.yaml:2: product.modality", "text, embeddings, rerank or transcription"},
      {"traffic:\n  batch_size: 8\n", "e.yaml:2: traffic.batch_size", "only applies to an embeddings card"},
      {"bench:\n  endpoint: embeddings\n", "e.yaml:2: bench.endpoint", "needs product.modality: embeddings"},
  });
  EXPECT_TRUE(ParseCard("product:\n  modality: text\n", "e.yaml").ok());
}

TEST(EmbeddingsCardTest, TheExampleCardParses) {
  auto card = LoadCardFile(testing::SourceDir() + "/examples/embeddings.yaml");
  ASSERT_TRUE(card.ok()) << card.status().ToString();
  EXPECT_EQ(card->bench.endpoint, "embeddings");
  ASSERT_TRUE(card->traffic.batch_size.has_value());
  EXPECT_TRUE(card->Assumed("traffic.batch_size"));
}

TEST(EmbeddingsCardTest, CardCheckAsksForTheBatchSizeNotForGenerationFields) {
  auto card = ParseCard("product: {modality: embeddings}\ntraffic: {arrival: 5rps, input_tokens: 64}\n", "e.yaml");
  ASSERT_TRUE(card.ok()) << card.status().ToString();
  std::vector<std::string> missing;
  for (const Gap& g : FindGaps(*card)) {
    if (g.kind == Gap::Kind::kMissing) missing.push_back(g.path);
  }
  EXPECT_THAT(missing, ::testing::Contains("traffic.batch_size"));
  EXPECT_THAT(missing, ::testing::Contains("slo.e2e"));
  for (const char* never : {"traffic.output_tokens", "product.streaming", "slo.ttft", "slo.itl", "quality.eval_set"}) {
    EXPECT_THAT(missing, ::testing::Not(::testing::Contains(never))) << never;
  }
}

}  // namespace
}  // namespace infereng::card
