// ClientLoad: how a client applies a card's traffic. This header holds THE load rule, the
// one place it is written down: bench (bench::ResolveLoadPlan), the twin (simulate,
// capacity, sweep --simulate; twin/load_client.h applies it in virtual time) and run's
// prediction all resolve their load here, so a measured run and its prediction always
// apply the same load.
//
//   rate R alone          open loop, the card's arrival shape rescaled to mean R
//   concurrency C alone   closed loop with exactly C in flight: each of C users sends its next
//                         request when its previous one ends (t_sched = when the slot freed)
//   both                  open loop at R, at most C in flight (a client-side cap: a request
//                         beyond C waits in the client, FIFO; t_send - t_sched shows the wait)
//   neither               the card: closed loop when it sets traffic.concurrency and no
//                         traffic.arrival; else open loop at the card's rate, capped by
//                         traffic.concurrency when both are present
//
// The rate becomes a factor on the card's arrival process (GeneratorOptions::rate_scale;
// for a trace, its replay speed): R / the card's mean rate. Without R, simulate's
// --rate-scale is that factor (R, when given, is absolute and wins); a closed loop has no
// rate and refuses one.
//
// Closed loop judges SLOs on TTFT/E2E from t_send (there is no client queue); open loop,
// capped or not, on the incl.-queue variants (AccumulatorOptions::open_loop = !closed_loop).
//
// Ramp-up (optional, the same in bench and the twin): open loop stretches the generator's
// load time so the offered rate grows linearly from 0 over `ramp` (RampedOffset); closed
// loop raises the allowed concurrency from 1 to C over `ramp` (RampedConcurrency).
#pragma once

#include <optional>
#include <string>

#include "card/card.h"
#include "core/clock.h"
#include "core/status.h"

namespace infereng::workload {

struct LoadOverrides {
  std::optional<double> rate_rps = std::nullopt;  // --rate
  std::optional<int> concurrency = std::nullopt;  // --concurrency
  double rate_scale = 1.0;         // --rate-scale (simulate): multiplies the open-loop rate
  Nanos ramp = 0;                  // --ramp
};

enum class LoadMode { kOpenLoop, kOpenLoopCapped, kClosedLoop };

struct ClientLoad {
  bool closed_loop = false;
  int concurrency = 0;             // closed loop: C (>= 1); open loop: the cap, 0 = none
  std::optional<double> rate_rps;  // open loop: the requested mean rate; none = the card's
  double rate_scale = 1.0;         // the generator's rate_scale (closed loop: 1, unused)
  double mean_rate_rps = 0;        // open loop: the offered mean rate (card's mean x rate_scale); closed: 0
  Nanos ramp = 0;                  // open loop: rate ramp; closed loop: concurrency ramp

  LoadMode mode() const;
  bool capped() const { return mode() == LoadMode::kOpenLoopCapped; }
  // "closed_loop" | "open_loop_capped" | "open_loop" (the manifest's load.mode).
  const char* ModeName() const;
};

// Applies the rule above. Open loop reads the card's arrival process once (for a trace,
// scans the file) for its mean rate. Errors name the flag: "--rate: must be > 0
// requests/s", "--concurrency: must be >= 1", "--ramp: must be >= 0".
Result<ClientLoad> ResolveClientLoad(const card::WorkloadCard& card, const LoadOverrides& overrides);

// "poisson", "constant", "gamma", "on_off", "diurnal", "trace".
std::string ArrivalName(const card::ArrivalSpec& arrival);

// True when the card writes traffic.arrival (or a field under it) itself.
bool CardHasArrival(const card::WorkloadCard& card);

// Maps a generator arrival offset (load time at the full rate) to real time since t0:
// a = t^2 / (2R) for t < R and a = t - R/2 afterwards (so t >= a always).
Nanos RampedOffset(Nanos arrival_offset, Nanos ramp);

// Concurrency allowed at `elapsed` since t0 while ramping from 1 to `target` over `ramp`.
int RampedConcurrency(int target, Nanos elapsed, Nanos ramp);

// The first elapsed time at which RampedConcurrency(target, ·, ramp) exceeds `limit`
// (limit < target); the twin's closed loop wakes then instead of polling.
Nanos RampedConcurrencyRisesAt(int target, int limit, Nanos ramp);

}  // namespace infereng::workload
