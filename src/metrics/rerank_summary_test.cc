// Rerank records in a summary: the embeddings block counted in documents (items) and pair
// tokens, under summary.json's "rerank" key, round-tripped, printed as documents.
#include <gtest/gtest.h>

#include "metrics/embeddings_summary.h"
#include "metrics/records_io.h"
#include "metrics/summary.h"
#include "metrics/summary_json.h"
#include "metrics/summary_table.h"
#include "metrics/test_records.h"

namespace infereng::metrics {
namespace {

using testdata::Rec;

RequestRecord Rerank(uint64_t id, double sched_ms, double end_ms, int32_t documents, int32_t query, int64_t tokens) {
  RequestRecord r = Rec(id, sched_ms, sched_ms, {}, end_ms);
  r.items = documents;
  r.query_tokens = query;
  r.input_tokens_target = static_cast<int32_t>(tokens);
  r.prompt_tokens = tokens;
  r.completion_tokens = 0;
  return r;
}

TEST(RerankSummaryTest, DocumentsAndPairTokensUnderTheRerankKey) {
  AccumulatorOptions o;
  o.window_end = MillisToNanos(1000);
  const std::vector<RequestRecord> records = {
      Rerank(0, 0, 50, 10, 12, 10 * (12 + 100)),
      Rerank(1, 400, 480, 5, 20, 5 * (20 + 60)),
  };
  const Summary s = Summarize(records, o);
  ASSERT_TRUE(s.embeddings.has_value());
  const EmbeddingsSummary& e = *s.embeddings;
  EXPECT_TRUE(e.rerank);
  EXPECT_EQ(e.requests, 2);
  EXPECT_EQ(e.items, 15);
  EXPECT_EQ(e.input_tokens, 1120 + 400);
  EXPECT_DOUBLE_EQ(e.items_per_s, 15.0);
  EXPECT_DOUBLE_EQ(e.input_tokens_per_item.max, 112);
  EXPECT_EQ(s.ttft_ms.count, 0);

  const nlohmann::json j = SummaryToJson(s);
  EXPECT_TRUE(j.contains("rerank"));
  EXPECT_FALSE(j.contains("embeddings"));
  EXPECT_EQ(j["rerank"]["items"], 15);
  EXPECT_FALSE(j.contains("ttft_ms"));
  Result<Summary> back = SummaryFromJson(j);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_TRUE(back->embeddings.has_value());
  EXPECT_EQ(*back->embeddings, e);  // rerank included

  const std::string table = FormatSummaryTable(s, TableOptions{.show_boundaries = false});
  EXPECT_NE(table.find("rerank: documents 15.00 documents/s | pair tokens 1520.0 tok/s"), std::string::npos) << table;
  EXPECT_NE(table.find("2 requests, 15 documents, 1520 pair tokens"), std::string::npos) << table;
  EXPECT_EQ(table.find("items"), std::string::npos) << table;

  // The query's tokens survive requests.jsonl; an embeddings record has none.
  Result<RequestRecord> rt = RecordFromJson(RecordToJson(records[1], 0));
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  EXPECT_EQ(rt->items, 5);
  EXPECT_EQ(rt->query_tokens, 20);
  RequestRecord emb = records[1];
  emb.query_tokens = 0;
  EXPECT_FALSE(RecordToJson(emb, 0).contains("query_tokens"));
  EXPECT_FALSE(Summarize({emb}, o).embeddings->rerank);
}

}  // namespace
}  // namespace infereng::metrics
