// Workload generator and card parser throughput: how many RequestSpecs per second one
// thread can produce (the load generator and the twin pull them on their hot paths), and
// how long parsing a card takes.
//   build/release/workload_bench   (release preset; Debug numbers are ~5-10x slower)
#include <benchmark/benchmark.h>

#include <string>

#include "card/card_parser.h"
#include "card/templates.h"
#include "workload/generator.h"

namespace {

using infereng::card::ParseCard;

infereng::card::WorkloadCard CardFor(const std::string& arrival) {
  auto card = ParseCard("traffic:\n  arrival: " + arrival +
                            "\n  input_tokens: {lognormal: {p50: 1000, p99: 8000}}\n"
                            "  output_tokens: {lognormal: {p50: 200, p99: 1000}}\n"
                            "  prefix: {share: 0.8, tokens: 500, distinct: 4, tenants: 8}\n",
                        "bench.yaml");
  if (!card.ok()) std::abort();
  return *card;
}

void GeneratorNext(benchmark::State& state, const std::string& arrival) {
  const auto card = CardFor(arrival);
  auto gen = infereng::workload::Generator::FromCard(card, 1);
  if (!gen.ok()) std::abort();
  for (auto _ : state) {
    auto r = gen->Next();
    benchmark::DoNotOptimize(r);
  }
  state.SetItemsProcessed(state.iterations());
}

BENCHMARK_CAPTURE(GeneratorNext, poisson, std::string("{process: poisson, rate: 100rps}"));
BENCHMARK_CAPTURE(GeneratorNext, gamma_cv2, std::string("{process: gamma, rate: 100rps, cv: 2}"));
BENCHMARK_CAPTURE(GeneratorNext, diurnal, std::string("{process: diurnal, rate: 100rps, period: 1h, peak_to_trough: 4}"));
BENCHMARK_CAPTURE(GeneratorNext, on_off, std::string("{process: on_off, rate: 100rps, on: 10s, off: 20s}"));

void ParseChatCard(benchmark::State& state) {
  const auto yaml = infereng::card::FindCardTemplate("chat")->yaml;
  for (auto _ : state) {
    auto card = ParseCard(yaml, "chat.yaml");
    benchmark::DoNotOptimize(card);
  }
}
BENCHMARK(ParseChatCard);

}  // namespace

BENCHMARK_MAIN();
