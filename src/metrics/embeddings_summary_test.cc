// Embeddings records in a summary: E2E from send to the end of the answer, items and input
// tokens per second over the window, no TTFT/ITL (absent from the JSON), and the JSON's
// round trip.
#include "metrics/embeddings_summary.h"

#include <gtest/gtest.h>

#include "metrics/records_io.h"
#include "metrics/summary.h"
#include "metrics/summary_json.h"
#include "metrics/summary_table.h"
#include "metrics/test_records.h"

namespace infereng::metrics {
namespace {

using testdata::Rec;

RequestRecord Emb(uint64_t id, double sched_ms, double send_ms, double end_ms, int32_t items, int64_t tokens,
                  ErrorClass error = ErrorClass::kNone) {
  RequestRecord r = Rec(id, sched_ms, send_ms, {}, end_ms, error);
  r.items = items;
  r.input_tokens_target = static_cast<int32_t>(tokens);
  r.prompt_tokens = error == ErrorClass::kNone ? tokens : -1;
  r.completion_tokens = 0;
  return r;
}

TEST(EmbeddingsSummaryTest, ItemsAndTokensPerSecondOverTheWindowAndNoTokenStream) {
  AccumulatorOptions o;
  o.window_end = MillisToNanos(1000);
  o.slo.latency.push_back(card::SloTarget{"e2e_ms", 99, 100});
  const std::vector<RequestRecord> records = {
      Emb(0, 0, 1, 41, 4, 400),     // e2e 40 ms (incl. queue 41)
      Emb(1, 500, 502, 562, 8, 640),
      Emb(2, 900, 900, 1200, 2, 100),  // ends after the window: no rate, still in window by t_sched
      Emb(3, 950, 951, 960, 3, 0, ErrorClass::kMismatch),
  };
  const Summary s = Summarize(records, o);
  ASSERT_TRUE(s.embeddings.has_value());
  const EmbeddingsSummary& e = *s.embeddings;
  EXPECT_EQ(e.requests, 3);
  EXPECT_EQ(e.items, 14);
  EXPECT_EQ(e.input_tokens, 1140);
  EXPECT_EQ(e.window_items, 12);
  EXPECT_EQ(e.window_input_tokens, 1040);
  EXPECT_DOUBLE_EQ(s.rate_basis_s, 1.0);
  EXPECT_DOUBLE_EQ(e.items_per_s, 12.0);
  EXPECT_DOUBLE_EQ(e.input_tokens_per_s, 1040.0);
  EXPECT_DOUBLE_EQ(e.items_per_request.max, 8);
  EXPECT_DOUBLE_EQ(e.input_tokens_per_item.max, 100);
  EXPECT_EQ(s.errors.at("mismatch"), 1);
  EXPECT_EQ(s.e2e_ms.count, 3);
  EXPECT_DOUBLE_EQ(s.e2e_ms.min, 40);
  EXPECT_DOUBLE_EQ(s.e2e_incl_queue_ms.max, 300);
  EXPECT_EQ(s.ttft_ms.count, 0);
  EXPECT_EQ(s.output_tokens.count, 0);
  EXPECT_EQ(s.counts.zero_output, 0);  // no output is the design, not an anomaly
  ASSERT_EQ(s.slo.size(), 1u);
  EXPECT_EQ(s.slo[0].samples, 3);
  EXPECT_FALSE(s.slo[0].pass);  // p99 of {41, 62, 300} > 100 ms

  const nlohmann::json j = SummaryToJson(s);
  EXPECT_TRUE(j.contains("e2e_ms"));
  for (const char* key : {"ttft_ms", "itl_ms", "tpot_ms", "decode_rate_per_user_tok_s"}) {
    EXPECT_FALSE(j.contains(key)) << key;
  }
  Result<Summary> back = SummaryFromJson(j);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_TRUE(back->embeddings.has_value());
  EXPECT_EQ(*back->embeddings, e);

  const std::string table = FormatSummaryTable(s, TableOptions{.show_boundaries = false});
  EXPECT_NE(table.find("embeddings: items 12.00 items/s | input tokens 1040.0 tok/s"), std::string::npos) << table;
  EXPECT_EQ(table.find("TTFT"), std::string::npos) << table;

  // The records keep their item count through requests.jsonl.
  Result<RequestRecord> rt = RecordFromJson(RecordToJson(records[1], 0));
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  EXPECT_EQ(rt->items, 8);
}

TEST(EmbeddingsSummaryTest, TextRunsHaveNoEmbeddingsBlockAndBadJsonNamesTheField) {
  const Summary s = Summarize({Rec(0, 0, 0, {{10}, {20}}, 20)}, AccumulatorOptions{});
  EXPECT_FALSE(s.embeddings.has_value());
  EXPECT_FALSE(SummaryToJson(s).contains("embeddings"));
  nlohmann::json bad = EmbeddingsToJson(EmbeddingsSummary{});
  bad["items"] = -3;
  Result<EmbeddingsSummary> r = EmbeddingsFromJson(bad, "summary.embeddings");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "summary.embeddings.items: expected an integer >= 0");
}

}  // namespace
}  // namespace infereng::metrics
