// LoadPlan: the load one bench run applies, resolved from the card and the flag overrides
// (flags win). Pure; tested without a server. The closed/open/cap rule below is
// workload::ResolveClientLoad, shared with the twin's client layer:
//
//   --rate R alone          open loop, the card's arrival shape rescaled to mean R
//   --concurrency C alone   closed loop with exactly C in flight
//   both                    open loop at R, at most C in flight (a client-side cap)
//   neither                 the card: closed loop when it sets traffic.concurrency and no
//                           traffic.arrival; else open loop at the card's rate (capped by
//                           traffic.concurrency when both are present)
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
  double rate_rps = 0;           // requested mean rate; 0 = the card's (filled by the session)
  int concurrency = 0;           // closed loop: C; open loop: cap (0 none)
  Nanos duration = 0;            // measurement window (0 in requests mode)
  int64_t requests = -1;         // measured requests (-1 in duration mode)
  Nanos warmup = 0, cooldown = 0, ramp = 0;
  int trials = 1;
  uint64_t seed = 42;
  ApiEndpoint endpoint = ApiEndpoint::kChat;
  Nanos timeout = 600 * kNanosPerSecond;
  std::string arrival;           // "poisson", "gamma", ... ("closed" for closed loop)
};

Result<LoadPlan> ResolveLoadPlan(const BenchOptions& opt);

using workload::ArrivalName;  // "poisson", "constant", ...

}  // namespace infereng::bench
