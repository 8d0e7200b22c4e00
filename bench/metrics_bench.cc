// Throughput of the analysis path: LogHistogram::Add, per-request derivation, and the
// SummaryAccumulator in exact and histogram mode (records/s), for docs/PERFORMANCE.md.
//   scripts/dev-build.sh metrics_bench && build/dev/metrics_bench
// (numbers from a Debug build are pessimistic; the release preset gives the real figures).
#include <random>
#include <vector>

#include <benchmark/benchmark.h>

#include "core/histogram.h"
#include "metrics/derive.h"
#include "metrics/summary.h"

namespace {

using namespace infereng;
using namespace infereng::metrics;

// A realistic streamed request: TTFT ~100 ms, `tokens` one-token chunks ~20 ms apart.
std::vector<RequestRecord> MakeRecords(size_t n, int tokens) {
  std::mt19937_64 rng(1);
  std::exponential_distribution<double> gap(1.0 / 20e6);
  std::vector<RequestRecord> out(n);
  for (size_t i = 0; i < n; ++i) {
    RequestRecord& r = out[i];
    r.id = i;
    r.t_sched = static_cast<Nanos>(i) * 50 * kNanosPerMilli;
    r.t_send = r.t_sched + 20 * kNanosPerMicro;
    Nanos t = r.t_send + 100 * kNanosPerMilli;
    for (int k = 0; k < tokens; ++k) {
      r.chunks.push_back(Chunk{t, 1, false});
      t += static_cast<Nanos>(gap(rng));
    }
    r.t_end = t;
  }
  return out;
}

void BM_HistogramAdd(benchmark::State& state) {
  LogHistogram h;
  std::mt19937_64 rng(2);
  std::lognormal_distribution<double> dist(3, 1.5);
  std::vector<double> values(4096);
  for (double& v : values) v = dist(rng);
  size_t i = 0;
  for (auto _ : state) {
    h.Add(values[i++ & 4095]);
  }
  benchmark::DoNotOptimize(h.count());
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_HistogramAdd);

void BM_DeriveRequest(benchmark::State& state) {
  const auto recs = MakeRecords(64, static_cast<int>(state.range(0)));
  size_t i = 0;
  for (auto _ : state) {
    RequestMetrics m = DeriveRequest(recs[i++ & 63]);
    benchmark::DoNotOptimize(m.tpot_ms);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_DeriveRequest)->Arg(256);

// records/s through Add (Finish excluded: it is once per run).
void BM_Accumulate(benchmark::State& state) {
  const auto recs = MakeRecords(1024, static_cast<int>(state.range(1)));
  AccumulatorOptions o;
  o.mode = state.range(0) == 0 ? AccumulatorOptions::Mode::kExact : AccumulatorOptions::Mode::kHistogram;
  o.slo.latency = {{.metric = "ttft_ms", .percentile = 99, .threshold_ms = 500},
                   {.metric = "itl_ms", .percentile = 99, .threshold_ms = 100}};
  for (auto _ : state) {
    state.PauseTiming();
    SummaryAccumulator acc(o);
    state.ResumeTiming();
    for (const RequestRecord& r : recs) acc.Add(r);
    benchmark::DoNotOptimize(acc.added());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(recs.size()));
  state.SetLabel(state.range(0) == 0 ? "exact" : "histogram");
}
BENCHMARK(BM_Accumulate)->Args({0, 256})->Args({1, 256})->Unit(benchmark::kMillisecond);

void BM_Finish(benchmark::State& state) {
  const auto recs = MakeRecords(10000, 256);
  AccumulatorOptions o;
  o.mode = state.range(0) == 0 ? AccumulatorOptions::Mode::kExact : AccumulatorOptions::Mode::kHistogram;
  SummaryAccumulator acc(o);
  for (const RequestRecord& r : recs) acc.Add(r);
  for (auto _ : state) {
    Summary s = acc.Finish();
    benchmark::DoNotOptimize(s.ttft_ms.p99);
  }
  state.SetLabel(state.range(0) == 0 ? "exact, 10k records x 256 tokens" : "histogram, 10k x 256");
}
BENCHMARK(BM_Finish)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
