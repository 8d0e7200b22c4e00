// `diagnose` end to end: a real (bounded, 127.0.0.1) run against the embedded engine with an
// injected bottleneck — two sequences at most, offered twice what they serve — and the
// diagnosis of its run directory (records + the periodic engine_metrics.jsonl).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "card/card_parser.h"
#include "job/bench_job.h"
#include "job/diagnose.h"
#include "job/embedded_engine.h"

namespace infereng::job {
namespace {

namespace fs = std::filesystem;

TEST(DiagnoseEndToEnd, QueueBoundEmbeddedRunRanksQueueingFirst) {
  Result<card::WorkloadCard> card = card::ParseCard(R"(name: queue-bound
traffic:
  arrival: {process: poisson, rate: 20rps}
  input_tokens: 128
  output_tokens: 32
model:
  id: tiny-model
  architecture: llama-3.1-8b
deployment:
  accelerator: h100-sxm
engine:
  max_num_seqs: 2
bench:
  duration: 3s
  warmup: 500ms
  seed: 3
)",
                                                    "queue-bound.yaml");
  ASSERT_TRUE(card.ok()) << card.status().ToString();
  EmbeddedOptions eo;
  eo.seed = 3;
  Result<JobEngine> engine = JobEngine::Open("", *card, eo);
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  const std::string out = (fs::temp_directory_path() / ("diagnose-e2e-" + std::to_string(getpid()))).string();
  fs::remove_all(out);
  bench::BenchOptions opt;
  opt.card = *card;
  opt.out_dir = out;
  opt.scrape_interval = 250 * kNanosPerMilli;
  engine->Apply(&opt);
  Result<bench::BenchResult> res = RunBench(opt);
  engine->Stop();
  ASSERT_TRUE(res.ok()) << res.status().ToString();
  ASSERT_TRUE(fs::exists(out + "/engine_metrics.jsonl"));

  Result<Diagnosis> d = Diagnose(out);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->engine, "infereng");
  ASSERT_FALSE(d->hypotheses.empty());
  // On a machine too loaded to keep the schedule, the client comes first (and says so);
  // the engine's queue must still be the first engine-side cause.
  const Hypothesis* first = &d->hypotheses.front();
  if (d->client_shaped && first->id == "client_bound" && d->hypotheses.size() > 1) first = &d->hypotheses[1];
  EXPECT_EQ(first->id, "queueing") << DiagnosisToMarkdown(*d);
  // The evidence is the run's: the waiting maximum is the engine series' maximum.
  double max_waiting = 0;
  for (const Evidence& e : first->evidence) {
    if (e.what == "requests waiting (max)") max_waiting = e.value;
  }
  EXPECT_GE(max_waiting, 5) << "20 req/s offered to ~10 req/s of capacity for 3.5 s";
  fs::remove_all(out);
}

}  // namespace
}  // namespace infereng::job
