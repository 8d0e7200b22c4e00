// `plan` end to end: the top experiment's predicted effect checked by running it. A small
// card is planned on the twin; its baseline and its top experiment (the one change applied
// to the card) then run on the embedded engine (127.0.0.1, a few seconds each), and the
// measured change of the experiment's headline metric must lie within the plan's stated
// uncertainty of the predicted change (docs/plan.md).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "card/card_parser.h"
#include "job/bench_job.h"
#include "job/embedded_engine.h"
#include "job/plan.h"

namespace infereng::job {
namespace {

namespace fs = std::filesystem;

// Constant arrivals and fixed lengths: the few seconds of a test give stable percentiles.
constexpr const char* kCard = R"(name: plan-e2e
traffic:
  arrival: {process: constant, rate: 8rps}
  input_tokens: {fixed: 1024}
  output_tokens: {fixed: 48}
slo:
  ttft: {p99: 150ms}
  itl: {p99: 35ms}
model:
  id: tiny-model
  architecture: llama-3.1-8b
deployment:
  accelerator: h100-sxm
engine:
  max_num_seqs: 4
bench:
  duration: 4s
  warmup: 500ms
  seed: 3
)";

// The card with the experiment's one change, as the embedded engine reads it (its twin
// takes knobs from the card's engine: map, as `--set` would set them).
card::WorkloadCard WithChange(const card::WorkloadCard& card, const std::vector<PlanOverride>& overrides) {
  Result<OverriddenCard> o = ApplyOverrides(card, overrides);
  EXPECT_TRUE(o.ok()) << o.status().ToString();
  card::WorkloadCard c = o->card;
  for (const std::string& set : o->setup.sets) {
    const size_t eq = set.find('=');
    std::string key = set.substr(0, eq);
    if (key.starts_with("engine.")) key = key.substr(7);
    c.engine[key] = set.substr(eq + 1);
  }
  return c;
}

Result<metrics::Summary> Measure(const card::WorkloadCard& card, const std::string& out) {
  EmbeddedOptions eo;
  eo.seed = 3;
  INFERENG_ASSIGN_OR_RETURN(JobEngine engine, JobEngine::Open("", card, eo));
  fs::remove_all(out);
  bench::BenchOptions opt;
  opt.card = card;
  opt.out_dir = out;
  engine.Apply(&opt);
  Result<bench::BenchResult> res = RunBench(opt);
  engine.Stop();
  fs::remove_all(out);
  if (!res.ok()) return res.status();
  return res->summary;
}

TEST(PlanEndToEnd, TopExperimentsEffectMatchesTheEmbeddedEngine) {
  Result<card::WorkloadCard> card = card::ParseCard(kCard, "plan-e2e.yaml");
  ASSERT_TRUE(card.ok()) << card.status().ToString();
  Result<Plan> plan = BuildPlan(*card, {});
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  ASSERT_FALSE(plan->experiments.empty());
  const EvaluatedExperiment& top = plan->experiments.front();
  ASSERT_TRUE(top.predicted.has_value());
  ASSERT_FALSE(top.within_uncertainty) << "the card is meant to have a change the twin can tell from none";
  for (const PlanOverride& o : top.candidate.overrides) {
    ASSERT_FALSE(o.key.starts_with("cluster.")) << "the embedded engine is one replica: " << top.candidate.id;
  }

  const std::string base = (fs::temp_directory_path() / ("plan-e2e-" + std::to_string(getpid()))).string();
  Result<metrics::Summary> a = Measure(*card, base + "-a");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  Result<metrics::Summary> b = Measure(WithChange(*card, top.candidate.overrides), base + "-b");
  ASSERT_TRUE(b.ok()) << b.status().ToString();

  const PredictedMetric* m = nullptr;
  for (const PredictedMetric& x : PredictedMetrics()) {
    if (x.accept_key == top.headline_key) m = &x;
  }
  ASSERT_NE(m, nullptr) << top.headline_key;
  const double measured_a = FiguresFromSummary(*a).*m->value, measured_b = FiguresFromSummary(*b).*m->value;
  ASSERT_GT(measured_a, 0);
  const double predicted_ratio = 1 + top.headline_change, measured_ratio = measured_b / measured_a;
  const double u = plan->uncertainty.relative;
  // The line docs/plan.md records.
  std::printf("plan e2e: %s, %s predicted %+.1f%%, measured %.3g -> %.3g (%+.1f%%), band +/-%.1f%%\n",
              top.candidate.title.c_str(), top.headline.c_str(), 100 * top.headline_change, measured_a, measured_b,
              100 * (measured_ratio - 1), 100 * u);
  EXPECT_GE(measured_ratio, predicted_ratio * (1 - u))
      << top.candidate.title << ": " << top.headline << " measured " << measured_a << " -> " << measured_b;
  EXPECT_LE(measured_ratio, predicted_ratio * (1 + u))
      << top.candidate.title << ": " << top.headline << " measured " << measured_a << " -> " << measured_b;
}

}  // namespace
}  // namespace infereng::job
