// An embeddings card benchmarked end to end against the embedded server on 127.0.0.1:
// /v1/embeddings requests with batches of synthetic inputs, one vector per input checked,
// the summary's items/s computed from the records, no TTFT/ITL anywhere; and the twin's
// prediction of the same card.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "card/card_parser.h"
#include "job/bench_job.h"
#include "metrics/records_io.h"
#include "serve/paced_engine.h"
#include "serve/server.h"
#include "testing/embedded_server.h"
#include "twin/cost_model.h"
#include "twin/simulation.h"

namespace infereng::job {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

card::WorkloadCard EmbeddingsCard() {
  auto c = card::ParseCard(R"(name: embed
product: {modality: embeddings}
traffic:
  arrival: {process: poisson, rate: 40rps}
  batch_size: {uniform: [1, 8]}
  input_tokens: {uniform: [8, 48]}
slo:
  e2e: {p99: 5s}
model: {id: emb-model}
bench: {duration: 1s, warmup: 0s, seed: 11}
)",
                           "embed.yaml");
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? *c : card::WorkloadCard{};
}

TEST(BenchEmbeddingsTest, BatchesOfInputsAgainstTheEmbeddedEngineCountItemsPerSecond) {
  serve::ServerOptions so;
  so.speedup = 20;
  so.model_name = "emb-model";
  testing::EmbeddedServer server(so, std::make_unique<serve::PacedEngine>(serve::PacedEngineOptions{}));
  ASSERT_TRUE(server.started());

  bench::BenchOptions o;
  o.target = server.url();
  o.card = EmbeddingsCard();
  o.out_dir = (fs::temp_directory_path() / ("infereng_embeddings_test_" + std::to_string(getpid()))).string();
  fs::remove_all(o.out_dir);
  Result<bench::BenchResult> r = RunBench(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const metrics::Summary& s = r->summary;
  EXPECT_GT(s.counts.succeeded, 20);
  EXPECT_LT(s.counts.records, 100);  // a few dozen requests
  EXPECT_EQ(s.counts.failed, 0) << r->first_error;
  ASSERT_TRUE(s.embeddings.has_value());
  EXPECT_EQ(r->manifest["load"]["endpoint"], "embeddings") << r->manifest.dump();

  // Every request carried 1..8 inputs of exact lengths (the embedded engine's /tokenize) and
  // got as many vectors; it has an E2E and no token stream.
  auto records = metrics::ReadRecordsFile(o.out_dir + "/requests.jsonl");
  ASSERT_TRUE(records.ok()) << records.status().ToString();
  const Nanos window_start = SecondsToNanos(s.window_start_s);
  const Nanos rate_end = window_start + SecondsToNanos(s.rate_basis_s);
  int64_t items = 0, tokens = 0, in_window_items = 0;
  for (const metrics::RequestRecord& rec : *records) {
    ASSERT_TRUE(rec.ok()) << rec.error_message;
    EXPECT_GE(rec.items, 1);
    EXPECT_LE(rec.items, 8);
    EXPECT_GE(rec.input_tokens_target, 8 * rec.items);
    EXPECT_EQ(rec.prompt_tokens, rec.input_tokens_target);
    EXPECT_TRUE(rec.chunks.empty());
    EXPECT_GT(rec.t_end, rec.t_send);
    items += rec.items;
    tokens += rec.prompt_tokens;
    if (rec.t_end >= window_start && rec.t_end <= rate_end) in_window_items += rec.items;
  }
  const metrics::EmbeddingsSummary& e = *s.embeddings;
  EXPECT_EQ(e.requests, static_cast<int64_t>(records->size()));
  EXPECT_EQ(e.items, items);
  EXPECT_EQ(e.input_tokens, tokens);
  EXPECT_EQ(e.window_items, in_window_items);
  // items/s is the window's items over the rate basis, exactly.
  ASSERT_GT(s.rate_basis_s, 0);
  EXPECT_DOUBLE_EQ(e.items_per_s, static_cast<double>(e.window_items) / s.rate_basis_s);
  EXPECT_DOUBLE_EQ(e.input_tokens_per_s, static_cast<double>(e.window_input_tokens) / s.rate_basis_s);
  EXPECT_GE(e.items_per_request.min, 1);
  EXPECT_LE(e.items_per_request.max, 8);

  // E2E is measured; TTFT/ITL/TPOT are absent from summary.json, not zero.
  EXPECT_EQ(s.e2e_ms.count, s.counts.succeeded);
  EXPECT_EQ(s.ttft_ms.count, 0);
  const json& sj = r->summary_json;
  EXPECT_TRUE(sj.contains("e2e_ms"));
  for (const char* key : {"ttft_ms", "itl_ms", "tpot_ms", "output_tokens"}) EXPECT_FALSE(sj.contains(key)) << key;
  ASSERT_TRUE(sj.contains("embeddings"));
  EXPECT_EQ(sj["embeddings"]["items"], items);
  ASSERT_EQ(s.slo.size(), 1u);
  EXPECT_TRUE(s.slo[0].pass);
  EXPECT_EQ(s.slo[0].samples, s.counts.succeeded);

  // The twin runs the same card and seed: the same batches, prefill-only requests.
  twin::TwinSettings ts;
  ts.engine.kv_cache_tokens = 1 << 20;
  const twin::TwinSetup setup = twin::ManualTwin(
      ts, std::make_shared<twin::LinearCostModel>(twin::LinearCostOptions{.fixed_s = 0.005, .per_prefill_token_s = 1e-5}), 1.0);
  twin::SimulationOptions sim_opt;
  sim_opt.duration_s = 1;
  auto sim = twin::RunSimulation(o.card, setup, sim_opt);
  ASSERT_TRUE(sim.ok()) << sim.status().ToString();
  ASSERT_TRUE(sim->summary.embeddings.has_value());
  EXPECT_GT(sim->summary.embeddings->items, 0);
  EXPECT_EQ(sim->summary.ttft_ms.count, 0);
  EXPECT_GT(sim->summary.e2e_ms.count, 0);
  fs::remove_all(o.out_dir);
}

}  // namespace
}  // namespace infereng::job
