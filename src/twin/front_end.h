// FrontEnd: what a request costs outside the engine, per request, in the twin.
//
//   client send --network/2--> server --preprocess--> engine arrival ... engine emits a token
//   --postprocess--> server writes it --network/2--> client sees it
//
// preprocess: HTTP parsing, chat template, tokenisation, hand-off to the engine;
// postprocess: detokenisation and stream framing of each response chunk; network: the
// client <-> server round trip (`product.network`, as `budget` reads it), half each way.
// Every chunk and the end of the stream are delayed by Outbound(); the engine sees the
// request Inbound() after the send. So TTFT and E2E grow by Inbound() + Outbound(), ITL
// and TPOT do not move, and the TTFT split (docs/metrics.md) puts both in client+network.
//
// Where the figures come from, first match wins, per figure: `--set cost.preprocess=...`
// (also cost.network, cost.postprocess; a card's engine: map alike), the card's
// product.preprocess / network / postprocess, a measured profile's front_end_s (as
// preprocess: `profile` measures the whole front end at once), else the engine profile's
// default (vLLM-like, or lighter for trtllm and sglang-0.3: DefaultFrontEnd; docs/modeling.md
// "The per-request front end" gives the values and their sources).
// `source` says which, so a prediction never hides that it used a default.
//
// Jitter (`--set cost.front_end_jitter=1ms`, default none): each request's way in is longer by
// an exponential draw of that mean, from the run's seed and the request's index (the same run
// twice is the same). Without it, the twin hands requests sent at the same virtual instant to
// the engine together, and closed-loop users whose answers end in one step stay in lockstep
// for ever: llama.cpp b11669 (CPU, 4 slots, FIDELITY.md (b5)) batched the first cycles' prompts
// so too, then the 1-5 ms between its streams' ends split them, which the twin never did (TTFT
// mean +24% at 2 users). Any mean from 0.3 to 10 ms gave the same result within 2% there.
// With engine.admission_window it decides how often closed-loop users' prompts make the next
// batch (FIDELITY.md (b6)).
//
// Thread-safety: a value type.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "card/card.h"
#include "core/clock.h"
#include "twin/engine_config.h"

namespace infereng::twin {

// The vLLM-like engine profile's defaults (docs/modeling.md "The per-request front end"): the ~35 ms of
// low-load TTFT that issue 13's comparison with vLLM's published benchmarks found outside
// the engine, split into request handling and the first chunk's post-processing; the
// benchmark client ran on the server's host (no network). Used for engine.scheduler vllm,
// vllm-v0 and llamacpp.
inline constexpr double kDefaultPreprocessS = 0.030;
inline constexpr double kDefaultPostprocessS = 0.005;
inline constexpr double kDefaultNetworkS = 0.0;
// engine.scheduler=trtllm: 4 + 1 ms. TensorRT-LLM under NIM answers an 8B model's first
// token in 9-10 ms in total at concurrency 1 (NIM 1.3.0 / 1.8.0 benchmarking page), which
// bounds its front end.
inline constexpr double kTrtLlmPreprocessS = 0.004;
inline constexpr double kTrtLlmPostprocessS = 0.001;
// engine.scheduler=sglang-0.3: 2.5 + 0.5 ms, fitted on the 8B TTFT rows of sglang's
// benchmark_vllm_060 (docs/FIDELITY.md (d3)).
inline constexpr double kSglangPreprocessS = 0.0025;
inline constexpr double kSglangPostprocessS = 0.0005;

// The default front end of an engine (preprocess, postprocess, network; source "...").
struct FrontEndDefaults {
  double preprocess_s, postprocess_s, network_s;
  const char* label;  // "vLLM-like", "TensorRT-LLM-like", "SGLang-0.3-like"
};
FrontEndDefaults DefaultFrontEnd(EngineScheduler s);

struct FrontEnd {
  double preprocess_s = 0;
  double network_s = 0;  // round trip
  double postprocess_s = 0;
  double jitter_s = 0;   // mean extra on the way in, exponential; 0: none
  std::string source;    // "card product.preprocess, product.network; default postprocess"

  Nanos Inbound() const { return SecondsToNanos(network_s / 2 + preprocess_s); }
  // Inbound() plus request `index`'s jitter draw for `seed` (Inbound() when jitter_s is 0).
  Nanos InboundFor(uint64_t seed, uint64_t index) const;
  Nanos Outbound() const { return SecondsToNanos(postprocess_s + network_s / 2); }
  bool none() const { return preprocess_s <= 0 && network_s <= 0 && postprocess_s <= 0 && jitter_s <= 0; }
};

// The front end for a card: knobs (>= 0 when set) over the card's product figures over
// `measured_s` (a profile's front_end_s, charged as preprocess) over the defaults of
// `scheduler`'s engine (DefaultFrontEnd).
FrontEnd ResolveFrontEnd(const card::ProductSpec& product, const CostKnobs& knobs,
                         std::optional<double> measured_s = std::nullopt,
                         EngineScheduler scheduler = EngineScheduler::kVllm);

// "preprocess 30 ms + network 0 ms + postprocess 5 ms (default: the card has no product.preprocess ...)"
std::string DescribeFrontEnd(const FrontEnd& f);

}  // namespace infereng::twin
