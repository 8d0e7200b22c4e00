// Reasoning models end to end: bench against the embedded engine playing a reasoning model
// on 127.0.0.1 (serve streams the first N tokens of each answer as
// delta.reasoning_content, its usage reports them), and `run`'s twin prediction of the same.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "card/card_parser.h"
#include "job/bench_job.h"
#include "job/embedded_engine.h"
#include "job/fidelity.h"
#include "job/run_report.h"
#include "metrics/derive.h"
#include "metrics/records_io.h"
#include "metrics/summary_table.h"
#include "report/report.h"
#include "serve/paced_engine.h"
#include "serve/server.h"
#include "testing/paths.h"

namespace infereng::job {
namespace {

namespace fs = std::filesystem;

card::WorkloadCard Card(const std::string& extra) {
  Result<card::WorkloadCard> c = card::ParseCard(R"(name: reasoning
traffic:
  arrival: {process: poisson, rate: 40rps}
  input_tokens: 32
  output_tokens: 12
model:
  id: tiny-model
bench:
  warmup: 0s
  seed: 7
)" + extra,
                                                 "reasoning.yaml");
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? *c : card::WorkloadCard{};
}

// The paced engine's timing is exact (one token every `itl` of engine time), so the gap
// between the first (reasoning) token and the first answer token is N x ITL; on the wall
// it is off by at most the two chunks' emission lateness, which the server measures.
TEST(BenchReasoning, CountsAreExactAndVisibleTtftIsTtftPlusReasoningTimesItl) {
  constexpr int kReasoning = 8;
  constexpr double kSpeedup = 4;
  serve::PacedEngineOptions po;
  po.itl = 20 * kNanosPerMilli;  // 5 ms on the wall
  po.reasoning_tokens = kReasoning;
  serve::ServerOptions so;
  so.port = 0;
  so.speedup = kSpeedup;
  so.model_name = "tiny-model";
  serve::Server server(so, std::make_unique<serve::PacedEngine>(po));
  Result<uint16_t> port = server.Start();
  ASSERT_TRUE(port.ok()) << port.status().ToString();

  const std::string out = testing::ScratchPath("bench-reasoning");
  fs::remove_all(out);
  bench::BenchOptions o;
  o.target = "http://127.0.0.1:" + std::to_string(*port);
  o.card = Card("slo:\n  ttft_visible: {p99: 10s}\n");
  o.out_dir = out;
  o.requests = 16;
  o.warmup = 0;
  Result<bench::BenchResult> r = RunBench(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const serve::ServerSnapshot snap = server.Snapshot();
  const metrics::Summary& s = r->summary;
  ASSERT_EQ(s.counts.succeeded, 16);
  EXPECT_EQ(s.counts.with_reasoning, 16);
  EXPECT_EQ(s.counts.reasoning_tokens, 16 * kReasoning);
  EXPECT_EQ(s.counts.reasoning_from_usage, 16);  // usage.completion_tokens_details
  EXPECT_DOUBLE_EQ(s.reasoning_tokens.p50, kReasoning);
  EXPECT_DOUBLE_EQ(s.reasoning_share, static_cast<double>(kReasoning) / 12);
  EXPECT_GT(s.visible_output_tokens_per_s, 0);
  EXPECT_LT(s.visible_output_tokens_per_s, s.output_tokens_per_s);
  ASSERT_EQ(s.slo.size(), 1u);
  EXPECT_EQ(s.slo[0].measured_as, "ttft_visible_incl_queue_ms");
  EXPECT_TRUE(s.slo[0].pass);

  Result<std::vector<metrics::RequestRecord>> records = metrics::ReadRecordsFile(out + "/requests.jsonl");
  ASSERT_TRUE(records.ok()) << records.status().ToString();
  const double expected_ms = kReasoning * NanosToMillis(po.itl) / kSpeedup;  // 40 ms
  const double tolerance_ms = NanosToMillis(snap.lateness_max) + 2;  // two writes' lateness + loopback
  for (const metrics::RequestRecord& rec : *records) {
    EXPECT_EQ(rec.completion_tokens, 12) << rec.id;
    EXPECT_EQ(rec.reasoning_tokens, kReasoning) << rec.id;
    int64_t stream_reasoning = 0;  // the stream's own count agrees with usage exactly
    for (const metrics::Chunk& c : rec.chunks) stream_reasoning += c.reasoning ? c.tokens : 0;
    EXPECT_EQ(stream_reasoning, kReasoning) << rec.id;
    const metrics::RequestMetrics m = metrics::DeriveRequest(rec);
    ASSERT_TRUE(m.ttft_ms && m.ttft_visible_ms) << rec.id;
    // A read that carried several events stamps them all with its newest arrival
    // (client/stamped_socket.h): when the client reached the socket late (a loaded host), a
    // token that shares its stamp with the k tokens queued behind it reads k ITLs late. Both
    // ends of the gap are corrected for it: the first token and the first visible one.
    const auto late_tokens = [&](size_t i) {
      int64_t k = 0;
      for (size_t j = i + 1; j < rec.chunks.size() && rec.chunks[j].t == rec.chunks[i].t; ++j) k += rec.chunks[j].tokens;
      return static_cast<double>(k);
    };
    size_t visible = 0;
    while (visible < rec.chunks.size() && rec.chunks[visible].reasoning) ++visible;
    ASSERT_LT(visible, rec.chunks.size()) << rec.id;
    const double shift_ms = (late_tokens(visible) - late_tokens(0)) * NanosToMillis(po.itl) / kSpeedup;
    EXPECT_NEAR(*m.ttft_visible_ms - *m.ttft_ms, expected_ms + shift_ms, tolerance_ms)
        << rec.id << " first token late by " << late_tokens(0) << " tokens, visible by " << late_tokens(visible);
  }

  // The SLO verdict flips at the threshold: re-judge the same records just above and just
  // below their P99 visible TTFT (incl. queue, open loop).
  const double p99 = metrics::Summarize(*records, {}).ttft_visible_incl_queue_ms.p99;
  for (const double threshold : {p99 + 0.001, p99 - 0.001}) {
    metrics::AccumulatorOptions ao;
    ao.slo.latency = {{.metric = "ttft_visible_ms", .percentile = 99, .threshold_ms = threshold}};
    const metrics::Summary judged = metrics::Summarize(*records, ao);
    ASSERT_EQ(judged.slo.size(), 1u);
    EXPECT_EQ(judged.slo[0].pass, threshold > p99) << threshold;
  }

  const std::string table = metrics::FormatSummaryTable(s, {.show_boundaries = false});
  EXPECT_NE(table.find("TTFT visible incl. q"), std::string::npos) << table;
  EXPECT_NE(table.find("reasoning: 16 of 16 ok requests | tokens/req p50 8.00"), std::string::npos) << table;
  ASSERT_TRUE(report::WriteReport(out).ok());
  std::ifstream report(out + "/report.html");
  std::stringstream html;
  html << report.rdbuf();
  EXPECT_NE(html.str().find("TTFT visible P99 (incl. queue)"), std::string::npos);
  EXPECT_NE(html.str().find("reasoning tokens / request"), std::string::npos);
  fs::remove_all(out);
}

// The whole loop of `run`: the embedded twin plays the card's reasoning model
// (engine.reasoning_tokens) at wall speed, and the twin's prediction of the same load
// predicts the visible TTFT (TTFT + the time to decode the reasoning) beside the measurement.
TEST(BenchReasoning, TheTwinPredictsVisibleTtftBesideTheMeasurement) {
  card::WorkloadCard card = Card(R"(engine:
  reasoning_tokens: 10
)");
  card.model.architecture = "llama-3.1-8b";
  card.deployment.accelerator = "h100-sxm";
  card.traffic.arrival.rate_rps = 8;
  EmbeddedOptions eo;
  eo.speedup = 1;  // the prediction compares engine time with wall time
  Result<JobEngine> engine = JobEngine::Open("", card, eo);
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  bench::BenchOptions o;
  o.card = card;
  o.duration = 2 * kNanosPerSecond;
  o.warmup = 0;
  o.out_dir = testing::ScratchPath("twin-reasoning");
  fs::remove_all(o.out_dir);
  engine->Apply(&o);
  Result<bench::BenchResult> r = RunBench(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  engine->Stop();
  const metrics::Summary& measured = r->summary;
  ASSERT_GT(measured.counts.succeeded, 5);
  EXPECT_EQ(measured.counts.reasoning_tokens, 10 * measured.counts.succeeded);

  // As `run` does: the prediction beside the measurement, then the report.
  const RunReport run = WriteRunReport(o, *r, {.predict = true, .engine_speedup = 1});
  ASSERT_TRUE(run.prediction.ok()) << run.prediction.ToString();
  ASSERT_TRUE(run.fidelity.has_value());
  const Fidelity& f = *run.fidelity;
  fs::remove_all(o.out_dir);
  const auto row = std::find_if(f.rows.begin(), f.rows.end(), [](const FidelityRow& x) {
    return x.metric == "ttft_visible_ms" && x.stat == "p50";
  });
  ASSERT_NE(row, f.rows.end()) << FidelityLine(f);
  // Visible TTFT is about ten decode steps after TTFT on both sides; the twin drives the
  // embedded engine, so its prediction lands close (the wall adds HTTP and scheduling).
  EXPECT_GT(row->predicted, 0);
  EXPECT_LT(std::abs(row->error), 0.25) << FidelityLine(f);
  const auto ttft = std::find_if(f.rows.begin(), f.rows.end(), [](const FidelityRow& x) {
    return x.metric == "ttft_ms" && x.stat == "p50";
  });
  ASSERT_NE(ttft, f.rows.end());
  EXPECT_GT(row->predicted, ttft->predicted);  // the reasoning takes time in the prediction too
  EXPECT_NE(FidelityLine(f).find("TTFT visible P50"), std::string::npos) << FidelityLine(f);
}

}  // namespace
}  // namespace infereng::job
