// A rerank card benchmarked end to end against the embedded server on 127.0.0.1: POST
// /v1/rerank requests of a synthetic query and documents of the drawn lengths, every
// document's score checked (count, indices), each record's documents and pair tokens
// exactly the generator's (the embedded engine counts text as the prompt builder does),
// the summary's rerank block in documents; and the twin's prediction of the same card.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>

#include "card/card_parser.h"
#include "job/bench_job.h"
#include "metrics/records_io.h"
#include "serve/paced_engine.h"
#include "serve/server.h"
#include "testing/embedded_server.h"
#include "twin/cost_model.h"
#include "twin/simulation.h"
#include "workload/generator.h"

namespace infereng::job {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

card::WorkloadCard RerankCard() {
  auto c = card::ParseCard(R"(name: rerank
product: {modality: rerank}
traffic:
  arrival: {process: poisson, rate: 40rps}
  input_tokens: {uniform: [4, 24]}
  documents: {uniform: [1, 12]}
  document_tokens: {uniform: [8, 64]}
slo:
  e2e: {p99: 5s}
model: {id: rerank-model}
bench: {duration: 1s, warmup: 0s, seed: 11}
)",
                           "rerank.yaml");
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? *c : card::WorkloadCard{};
}

TEST(BenchRerankTest, QueryAndDocumentsAgainstTheEmbeddedEngineCountDocumentsAndPairTokens) {
  serve::ServerOptions so;
  so.speedup = 20;
  so.model_name = "rerank-model";
  testing::EmbeddedServer server(so, std::make_unique<serve::PacedEngine>(serve::PacedEngineOptions{}));
  ASSERT_TRUE(server.started());

  bench::BenchOptions o;
  o.target = server.url();
  o.card = RerankCard();
  o.out_dir = (fs::temp_directory_path() / ("infereng_rerank_test_" + std::to_string(getpid()))).string();
  fs::remove_all(o.out_dir);
  Result<bench::BenchResult> r = RunBench(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const metrics::Summary& s = r->summary;
  EXPECT_GT(s.counts.succeeded, 20);
  EXPECT_LT(s.counts.records, 100);  // a few dozen requests
  EXPECT_EQ(s.counts.failed, 0) << r->first_error;
  ASSERT_TRUE(s.embeddings.has_value());
  EXPECT_TRUE(s.embeddings->rerank);
  EXPECT_EQ(r->manifest["load"]["endpoint"], "rerank") << r->manifest.dump();

  // The generator's requests for the same card and seed, by id: each record's documents,
  // query and pair tokens are exactly those (the answer's usage says the same).
  auto g = workload::Generator::FromCard(o.card, 11);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  std::map<uint64_t, workload::RequestSpec> specs;
  for (int i = 0; i < 500; ++i) {
    std::optional<workload::RequestSpec> spec = g->Next();
    ASSERT_TRUE(spec.has_value());
    specs[spec->index] = *spec;
  }
  auto records = metrics::ReadRecordsFile(o.out_dir + "/requests.jsonl");
  ASSERT_TRUE(records.ok()) << records.status().ToString();
  int64_t documents = 0, tokens = 0;
  for (const metrics::RequestRecord& rec : *records) {
    ASSERT_TRUE(rec.ok()) << rec.error_message;
    const workload::RequestSpec& spec = specs.at(rec.id);
    int64_t pairs = 0;
    for (int32_t t : spec.item_tokens) pairs += t;
    EXPECT_EQ(rec.items, static_cast<int32_t>(spec.item_tokens.size())) << rec.id;
    EXPECT_EQ(rec.query_tokens, spec.query_tokens) << rec.id;
    EXPECT_EQ(rec.input_tokens_target, pairs) << rec.id;
    EXPECT_EQ(rec.prompt_tokens, pairs) << rec.id;  // usage.total_tokens = Σ (query + document_k)
    EXPECT_GE(rec.items, 1);
    EXPECT_LE(rec.items, 12);
    EXPECT_TRUE(rec.chunks.empty());
    EXPECT_GT(rec.t_end, rec.t_send);
    documents += rec.items;
    tokens += rec.prompt_tokens;
  }
  const metrics::EmbeddingsSummary& e = *s.embeddings;
  EXPECT_EQ(e.requests, static_cast<int64_t>(records->size()));
  EXPECT_EQ(e.items, documents);
  EXPECT_EQ(e.input_tokens, tokens);
  ASSERT_GT(s.rate_basis_s, 0);
  EXPECT_DOUBLE_EQ(e.items_per_s, static_cast<double>(e.window_items) / s.rate_basis_s);
  EXPECT_EQ(s.ttft_ms.count, 0);
  const json& sj = r->summary_json;
  ASSERT_TRUE(sj.contains("rerank"));
  EXPECT_FALSE(sj.contains("embeddings"));
  EXPECT_EQ(sj["rerank"]["items"], documents);
  for (const char* key : {"ttft_ms", "itl_ms", "output_tokens"}) EXPECT_FALSE(sj.contains(key)) << key;

  // The twin runs the same card and seed: the same pairs, prefill-only requests.
  twin::TwinSettings ts;
  ts.engine.kv_cache_tokens = 1 << 20;
  const twin::TwinSetup setup = twin::ManualTwin(
      ts, std::make_shared<twin::LinearCostModel>(twin::LinearCostOptions{.fixed_s = 0.005, .per_prefill_token_s = 1e-5}), 1.0);
  twin::SimulationOptions sim_opt;
  sim_opt.duration_s = 1;
  auto sim = twin::RunSimulation(o.card, setup, sim_opt);
  ASSERT_TRUE(sim.ok()) << sim.status().ToString();
  ASSERT_TRUE(sim->summary.embeddings.has_value());
  EXPECT_TRUE(sim->summary.embeddings->rerank);
  EXPECT_GT(sim->summary.embeddings->items, 0);
  fs::remove_all(o.out_dir);
}

TEST(BenchRerankTest, EndpointsThatContradictTheCardAndDatasetsAreRefused) {
  bench::BenchOptions o;
  o.target = "http://127.0.0.1:9/v1/rerank";
  o.card = RerankCard();
  o.dataset = "prompts.jsonl";
  Result<bench::BenchResult> r = RunBench(o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("--dataset: not supported with a rerank card"), std::string::npos)
      << r.status().ToString();
  o.dataset.clear();
  o.target = "http://127.0.0.1:9/v1/embeddings";
  r = RunBench(o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("--target names the embeddings endpoint but the card's product.modality is rerank"),
            std::string::npos)
      << r.status().ToString();
}

}  // namespace
}  // namespace infereng::job
