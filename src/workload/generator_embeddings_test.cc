// The generator on an embeddings card: a batch of inputs per request, each input its own
// draw of traffic.input_tokens, the batch size its own RNG stream.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include "card/card_parser.h"
#include "testing/paths.h"
#include "workload/generator.h"

namespace infereng::workload {
namespace {

card::WorkloadCard Card(const std::string& modality_and_batch) {
  auto c = card::ParseCard("name: g\n" + modality_and_batch +
                               "traffic:\n  arrival: 10rps\n  input_tokens: {uniform: [4, 40]}\n"
                               "  output_tokens: 8\n",
                           "g.yaml");
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? *c : card::WorkloadCard{};
}

std::vector<RequestSpec> Take(const card::WorkloadCard& card, int n) {
  auto g = Generator::FromCard(card, 9);
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  std::vector<RequestSpec> out;
  for (int i = 0; i < n && g.ok(); ++i) out.push_back(*g->Next());
  return out;
}

TEST(GeneratorEmbeddingsTest, BatchesOfInputsWithTheirOwnLengths) {
  // output_tokens is refused on an embeddings card, so the embeddings card has none.
  auto emb = card::ParseCard("name: g\nproduct: {modality: embeddings}\ntraffic:\n  arrival: 10rps\n"
                             "  input_tokens: {uniform: [4, 40]}\n  batch_size: {uniform: [1, 8]}\n",
                             "g.yaml");
  ASSERT_TRUE(emb.ok()) << emb.status().ToString();
  const std::vector<RequestSpec> specs = Take(*emb, 200);
  std::set<size_t> sizes;
  for (const RequestSpec& s : specs) {
    ASSERT_GE(s.item_tokens.size(), 1u);
    ASSERT_LE(s.item_tokens.size(), 8u);
    sizes.insert(s.item_tokens.size());
    int32_t sum = 0;
    for (int32_t t : s.item_tokens) {
      EXPECT_GE(t, 4);
      EXPECT_LE(t, 40);
      sum += t;
    }
    EXPECT_EQ(s.input_tokens, sum);
    EXPECT_EQ(s.output_tokens, 0);
  }
  EXPECT_EQ(sizes.size(), 8u);  // every size 1..8 drawn in 200 requests
  // Same seed, same batches; the arrival stream is the text card's (independent streams).
  const std::vector<RequestSpec> again = Take(*emb, 200);
  const std::vector<RequestSpec> text = Take(Card(""), 200);
  for (size_t i = 0; i < specs.size(); ++i) {
    EXPECT_EQ(again[i].item_tokens, specs[i].item_tokens);
    EXPECT_EQ(text[i].t_arrival, specs[i].t_arrival);
    EXPECT_TRUE(text[i].item_tokens.empty());
  }
  // An item as a request of its own: its length, its own seed, an index no request has.
  const RequestSpec& batch = *std::find_if(specs.begin(), specs.end(), [](const RequestSpec& s) { return s.item_tokens.size() >= 2; });
  const RequestSpec first = EmbeddingItemSpec(batch, 0), second = EmbeddingItemSpec(batch, 1);
  EXPECT_EQ(first.input_tokens, batch.item_tokens[0]);
  EXPECT_EQ(second.input_tokens, batch.item_tokens[1]);
  EXPECT_NE(first.seed, second.seed);
  EXPECT_NE(first.index, second.index);
  EXPECT_NE(first.index & kEmbeddingItemIndexBit, 0u);
}

// An embeddings card replaying a trace: each row one request at the row's time, the row's
// input tokens split as evenly as whole tokens allow into the card's batch_size inputs
// (never more inputs than tokens); no output, no prefix blocks.
TEST(GeneratorEmbeddingsTest, TraceReplaySplitsEachRowsTokensIntoTheCardsBatch) {
  const std::string trace = testing::SourceDir() + "/src/trace/testdata/mooncake-conv-short.jsonl";
  auto emb = card::ParseCard("name: g\nproduct: {modality: embeddings}\ntraffic:\n  arrival: {process: trace, file: " + trace +
                                 "}\n  batch_size: 4\n",
                             "g.yaml");
  ASSERT_TRUE(emb.ok()) << emb.status().ToString();
  auto text = card::ParseCard("name: g\ntraffic:\n  arrival: {process: trace, file: " + trace + "}\n", "g.yaml");
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  auto g = Generator::FromCard(*emb, 9);
  auto t = Generator::FromCard(*text, 9);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  int rows = 0;
  for (;;) {
    std::optional<RequestSpec> e = g->Next(), x = t->Next();
    ASSERT_EQ(e.has_value(), x.has_value());
    if (!e) break;
    ++rows;
    EXPECT_EQ(e->t_arrival, x->t_arrival) << "the row's time";
    EXPECT_EQ(e->input_tokens, x->input_tokens) << "the row's tokens, all of them";
    ASSERT_EQ(e->item_tokens.size(), static_cast<size_t>(std::min(4, x->input_tokens)));
    int32_t sum = 0;
    for (int32_t k : e->item_tokens) {
      EXPECT_LE(std::abs(k - e->item_tokens.front()), 1) << "as even as whole tokens allow";
      sum += k;
    }
    EXPECT_EQ(sum, e->input_tokens);
    EXPECT_EQ(e->output_tokens, 0);
    EXPECT_TRUE(e->block_ids.empty());
  }
  EXPECT_EQ(rows, 203);
  EXPECT_TRUE(g->status().ok());
}

// A trace with a batch-size column: each row's own items split its tokens (capped at the
// tokens); a row without one falls back to the card's batch_size.
TEST(GeneratorEmbeddingsTest, TraceBatchSizeColumnSplitsEachRowByItsOwnItems) {
  const std::string trace = testing::ScratchPath("embeddings-items.csv");
  std::ofstream(trace) << "t,input_tokens,output_tokens,batch_size\n0,30,0,3\n1,7,0,10\n2,8,0,\n";
  auto emb = card::ParseCard("name: g\nproduct: {modality: embeddings}\ntraffic:\n  arrival: {process: trace, file: " + trace +
                                 "}\n  batch_size: 2\n",
                             "g.yaml");
  ASSERT_TRUE(emb.ok()) << emb.status().ToString();
  auto g = Generator::FromCard(*emb, 9);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  std::vector<std::vector<int32_t>> items;
  while (std::optional<RequestSpec> s = g->Next()) items.push_back(s->item_tokens);
  EXPECT_TRUE(g->status().ok()) << g->status().ToString();
  ASSERT_EQ(items.size(), 3u);
  EXPECT_EQ(items[0], (std::vector<int32_t>{10, 10, 10}));
  EXPECT_EQ(items[1], (std::vector<int32_t>(7, 1)));  // 10 inputs asked, 7 tokens: one each
  EXPECT_EQ(items[2], (std::vector<int32_t>{4, 4}));  // the card's batch_size
  std::filesystem::remove(trace);
}

}  // namespace
}  // namespace infereng::workload
