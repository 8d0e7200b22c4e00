// Cost of an embeddings answer at both ends, for docs/PERFORMANCE.md: the embedded
// engine writing it (EmbeddingsResponseJson: vectors + JSON, on the server thread) and the
// bench client checking it (ParseEmbeddingsResponse, on an io thread), per batch size, with
// 384-float vectors. Items/s of one core = batch / time per answer.
//   cmake --build --preset release --target embeddings_bench && build/release/embeddings_bench
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "client/embeddings_response.h"
#include "serve/embeddings.h"
#include "serve/text_model.h"

namespace {

using namespace infereng;

serve::EmbeddingsParams Batch(int64_t items) {
  serve::EmbeddingsParams p;
  for (int64_t i = 0; i < items; ++i) {
    p.inputs.emplace_back();
    serve::TokenizeAppend("query number " + std::to_string(i) + " about the time people spend on water", p.inputs.back());
    p.prompt_tokens += static_cast<int64_t>(p.inputs.back().size());
  }
  return p;
}

void BM_ServeEmbeddingsAnswer(benchmark::State& state) {
  const serve::EmbeddingsParams p = Batch(state.range(0));
  for (auto _ : state) {
    std::string body = serve::EmbeddingsResponseJson(p, "m", serve::Timings{});
    benchmark::DoNotOptimize(body);
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_ServeEmbeddingsAnswer)->Arg(1)->Arg(8)->Arg(32);

void BM_ClientParseEmbeddingsAnswer(benchmark::State& state) {
  const std::string body = serve::EmbeddingsResponseJson(Batch(state.range(0)), "m", serve::Timings{});
  for (auto _ : state) {
    Result<client::EmbeddingsResponse> r = client::ParseEmbeddingsResponse(body);
    benchmark::DoNotOptimize(r);
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(body.size()));
}
BENCHMARK(BM_ClientParseEmbeddingsAnswer)->Arg(1)->Arg(8)->Arg(32);

}  // namespace

BENCHMARK_MAIN();
