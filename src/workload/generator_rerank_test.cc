// The generator on a rerank card: a query (a draw of traffic.input_tokens) and documents
// (a draw of traffic.documents, on the batch stream), each document its own draw of
// traffic.document_tokens on its own stream; every item is a (query, document) pair.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "card/card_parser.h"
#include "workload/generator.h"

namespace infereng::workload {
namespace {

card::WorkloadCard Card(const std::string& traffic) {
  auto c = card::ParseCard("name: g\nproduct: {modality: rerank}\ntraffic:\n  arrival: 10rps\n" + traffic, "g.yaml");
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? *c : card::WorkloadCard{};
}

std::vector<RequestSpec> Take(const card::WorkloadCard& card, int n, uint64_t seed = 9) {
  auto g = Generator::FromCard(card, seed);
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  std::vector<RequestSpec> out;
  for (int i = 0; i < n && g.ok(); ++i) out.push_back(*g->Next());
  return out;
}

constexpr const char* kTraffic =
    "  input_tokens: {uniform: [4, 20]}\n  documents: {uniform: [1, 6]}\n  document_tokens: {uniform: [30, 90]}\n";

TEST(GeneratorRerankTest, EachItemIsTheQueryPlusOneDocument) {
  const std::vector<RequestSpec> specs = Take(Card(kTraffic), 300);
  std::set<size_t> counts;
  std::set<int32_t> queries;
  for (const RequestSpec& s : specs) {
    ASSERT_GE(s.item_tokens.size(), 1u);
    ASSERT_LE(s.item_tokens.size(), 6u);
    counts.insert(s.item_tokens.size());
    EXPECT_GE(s.query_tokens, 4);
    EXPECT_LE(s.query_tokens, 20);
    queries.insert(s.query_tokens);
    int64_t sum = 0;
    for (size_t k = 0; k < s.item_tokens.size(); ++k) {
      const int32_t doc = s.item_tokens[k] - s.query_tokens;
      EXPECT_GE(doc, 30);
      EXPECT_LE(doc, 90);
      sum += s.item_tokens[k];
      // A document as a text of its own: the pair minus the query, its own seed and index.
      const RequestSpec d = EmbeddingItemSpec(s, k);
      EXPECT_EQ(d.input_tokens, doc);
      EXPECT_NE(d.index & kEmbeddingItemIndexBit, 0u);
    }
    EXPECT_EQ(s.input_tokens, sum);
    EXPECT_EQ(s.output_tokens, 0);
    const RequestSpec q = RerankQuerySpec(s);
    EXPECT_EQ(q.input_tokens, s.query_tokens);
    EXPECT_NE(q.index, EmbeddingItemSpec(s, 0).index);
    EXPECT_NE(q.seed, EmbeddingItemSpec(s, 0).seed);
  }
  EXPECT_EQ(counts.size(), 6u);  // every count 1..6 drawn in 300 requests
  EXPECT_GT(queries.size(), 10u);
}

TEST(GeneratorRerankTest, SameSeedSameRequestsAndEachDrawOnItsOwnStream) {
  const std::vector<RequestSpec> a = Take(Card(kTraffic), 100), b = Take(Card(kTraffic), 100);
  const std::vector<RequestSpec> other_seed = Take(Card(kTraffic), 100, 10);
  // Longer documents: the counts and the queries do not move (their own streams), only
  // the documents' lengths do.
  const std::vector<RequestSpec> longer = Take(
      Card("  input_tokens: {uniform: [4, 20]}\n  documents: {uniform: [1, 6]}\n  document_tokens: {uniform: [300, 900]}\n"),
      100);
  int differ = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].item_tokens, b[i].item_tokens);
    EXPECT_EQ(a[i].query_tokens, b[i].query_tokens);
    EXPECT_EQ(a[i].t_arrival, b[i].t_arrival);
    differ += a[i].item_tokens != other_seed[i].item_tokens;
    EXPECT_EQ(longer[i].item_tokens.size(), a[i].item_tokens.size());
    EXPECT_EQ(longer[i].query_tokens, a[i].query_tokens);
    EXPECT_EQ(longer[i].t_arrival, a[i].t_arrival);
    for (int32_t t : longer[i].item_tokens) EXPECT_GE(t - longer[i].query_tokens, 300);
  }
  EXPECT_GT(differ, 50);
}

TEST(GeneratorRerankTest, DocumentsDefaultToOneAndDocumentTokensAreRequired) {
  const std::vector<RequestSpec> one = Take(Card("  input_tokens: 8\n  document_tokens: 100\n"), 20);
  for (const RequestSpec& s : one) {
    ASSERT_EQ(s.item_tokens.size(), 1u);
    EXPECT_EQ(s.item_tokens[0], 108);
    EXPECT_EQ(s.query_tokens, 8);
  }
  auto g = Generator::FromCard(Card("  input_tokens: 8\n  documents: 4\n"), 1);
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("traffic.document_tokens: not set"), std::string::npos) << g.status().ToString();
}

}  // namespace
}  // namespace infereng::workload
