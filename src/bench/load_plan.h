// LoadPlan: the load one bench run applies, resolved from the card and the flag overrides
// (flags win). Open/closed loop, cap, rate factor and ramp come from the load rule
// (workload/client_load.h), shared with the twin; the rest (window, trials, seed, prompt
// salt, endpoint, timeout) is bench's own. Reads the card's trace file (if any) for its mean
// rate; otherwise pure (but for the prompt salt's fresh draw when --prompt-salt is unset),
// tested without a server.
#pragma once

#include <cstdint>
#include <string>

#include "bench/bench_options.h"
#include "bench/request_body.h"
#include "core/status.h"
#include "workload/client_load.h"

namespace infereng::bench {

struct LoadPlan {
  bool closed_loop = false;
  double rate_scale = 1.0;       // multiplies the card's arrival rate (0: closed loop)
  double rate_rps = 0;           // requested mean rate; 0 = the card's
  double mean_rate_rps = 0;      // offered mean rate (open loop; 0 closed loop)
  int concurrency = 0;           // closed loop: C; open loop: cap (0 none)
  Nanos duration = 0;            // measurement window (0 in requests mode)
  int64_t requests = -1;         // measured requests (-1 in duration mode)
  Nanos warmup = 0, cooldown = 0, ramp = 0;
  int trials = 1;
  uint64_t seed = 42;
  // Mixed into every request's own text (not shared prefixes): --prompt-salt, else a fresh
  // random value, so two runs of one seed never send the same prompts (manifest: prompts.salt).
  uint64_t prompt_salt = 0;
  ApiEndpoint endpoint = ApiEndpoint::kChat;
  // The card's product.streaming: false asks for each answer whole (one JSON body: TTFT =
  // E2E, no ITL/TPOT). Prefill-only endpoints are never streamed.
  bool stream = true;
  Nanos timeout = 600 * kNanosPerSecond;
  std::string arrival;           // "poisson", "gamma", ... ("closed" for closed loop)
};

Result<LoadPlan> ResolveLoadPlan(const BenchOptions& opt);

// The one rule between a card's traffic and the API it is sent to: a text card goes to
// chat or completions, an embeddings (rerank) card to embeddings (rerank) only.
bool EndpointFitsCard(ApiEndpoint e, const card::ProductSpec& product);

using workload::ArrivalName;  // "poisson", "constant", ...

}  // namespace infereng::bench
