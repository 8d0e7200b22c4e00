// RooflineStepCost::Cost() throughput: the twin calls it once per simulated engine step
// (millions of times per simulation), so it must stay a few nanoseconds and allocation-free.
#include <benchmark/benchmark.h>

#include "catalog/catalog.h"
#include "fit/step_cost.h"

namespace {

using infereng::fit::Deployment;
using infereng::fit::RooflineStepCost;
using infereng::fit::StepShape;

Deployment Make(const char* model, const char* accel, int tp) {
  static const auto cat = infereng::catalog::Catalog::Load();
  Deployment d;
  d.model = *cat->FindModel(model);
  d.accel = *cat->FindAccelerator(accel);
  d.count = d.tp = tp;
  return d;
}

void Run(benchmark::State& state, const Deployment& d) {
  const RooflineStepCost cost(d);
  StepShape s;
  s.prefill_seqs = 1;
  s.prefill_tokens = 512;
  s.prefill_context = 1024;
  double sink = 0;
  int32_t i = 0;
  for (auto _ : state) {
    s.decode_seqs = 1 + (i++ & 255);  // vary the shape so nothing is hoisted
    s.decode_context = int64_t{s.decode_seqs} * 2000;
    sink += cost.Cost(s).total_s;
  }
  benchmark::DoNotOptimize(sink);
  state.SetItemsProcessed(state.iterations());
}

void BM_CostDense(benchmark::State& state) { Run(state, Make("llama-3.1-70b", "h100-sxm", 4)); }
void BM_CostMoe(benchmark::State& state) { Run(state, Make("deepseek-v3", "h200", 8)); }

BENCHMARK(BM_CostDense);
BENCHMARK(BM_CostMoe);

}  // namespace

BENCHMARK_MAIN();
