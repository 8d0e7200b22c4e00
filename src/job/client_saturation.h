// The client's saturation verdict: did the load generator itself shape this run's latencies?
//
// Three signals over the measured phase, each with a stated threshold (docs/metrics.md,
// "The client shaped these results"):
// - the client's own delay per SSE event (user-space stamp − kernel receive stamp,
//   client/stamped_socket.h): events waited in the socket for the client. The recorded
//   chunk times are the kernel's, so a late read moves them only when a stream's next event
//   joins the waiting one in the socket and the two share one read's stamp: the limit is
//   P99 > 1 ms or a quarter of the run's median ITL, whichever is larger (measured by
//   bench/client_truth_bench: at 1,000 streams x 50 tokens/s the delay P99 was 1.1–4.4 ms
//   while the TTFT and ITL errors stayed under 0.7 / 0.1 ms P99; at 2,000, 28–33 ms with
//   errors of 20–200 ms);
// - io-thread CPU (CLOCK_THREAD_CPUTIME_ID of the busiest io thread / the phase's wall
//   time) > 90%: the thread has no headroom left, so it reads late;
// - schedule lag (t_send − t_sched) of the steady phase only — requests scheduled after the
//   warm-up, the ramp and the first completion (closed loop: the opening burst of C sends
//   at t0 is excluded) — P99 > 2 ms: requests left late by more than the client-attributable
//   error the client aims for.
// The run is flagged when any crosses its threshold and not otherwise; each crossing is a
// reason that names the value and the limit. One function decides (JudgeSaturation); the
// summary, terminal note, report and diagnose's validity finding all read its result.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "client/rx_stamp_stats.h"
#include "core/clock.h"
#include "core/stats.h"

namespace infereng::job {

struct SaturationLimits {
  double stamp_delay_p99_ms = 1.0;      // the floor of the stamp-delay limit
  double stamp_delay_itl_share = 0.25;  // ... raised to this share of the median ITL
  double io_cpu_share = 0.9;
  double steady_lag_p99_ms = 2.0;
};

struct ClientSaturation {
  std::string stamp_source = "none";     // "kernel" | "user" | "mixed" | "none" (RxStampStats::Source)
  stats::SampleStats stamp_delay_ms;     // per event; count 0 without kernel stamps
  double stamp_delay_limit_ms = 1.0;     // the limit applied (floor, or the ITL share)
  std::optional<double> io_cpu_share;    // busiest io thread's CPU / phase wall time
  stats::SampleStats steady_lag_ms;      // schedule lag of the steady phase
  bool client_shaped = false;
  std::vector<std::string> reasons;      // one per threshold crossed
  SaturationLimits limits;
};

// The schedule lag of the steady phase, from one record's (t_sched, t_send, t_end) at a time
// (the record pipeline's thread), judged once the window is known.
class SteadyLagCollector {
 public:
  void Add(Nanos t_sched, Nanos t_send, Nanos t_end);
  // Lags (ms) of requests scheduled in [max(steady_from, first completion), window_end].
  std::vector<double> SteadyLagMs(Nanos steady_from, Nanos window_end) const;

 private:
  struct Sample {
    Nanos t_sched, lag;
  };
  std::vector<Sample> samples_;  // one per sent request (16 bytes: requests, not tokens)
  Nanos first_end_ = -1;
};

// The busiest io thread's CPU over `wall` ns: per-thread CPU times before and after
// (HttpTransport::IoThreadCpus); nullopt when the lists differ or no time passed.
std::optional<double> BusiestIoCpuShare(const std::vector<Nanos>& before, const std::vector<Nanos>& after, Nanos wall);

// `itl_p50_ms`: the run's median ITL (nullopt or <= 0: none measured, the floor applies).
ClientSaturation JudgeSaturation(const client::RxStampStats& stamps, std::optional<double> io_cpu_share,
                                 std::vector<double> steady_lag_ms, const SaturationLimits& limits = {},
                                 std::optional<double> itl_p50_ms = std::nullopt);

// summary.json "client"."saturation" (docs/results-schema.md).
nlohmann::json SaturationToJson(const ClientSaturation& s);

// The terminal/report note when the client shaped the run ("" otherwise).
std::string SaturationNote(const ClientSaturation& s);

}  // namespace infereng::job
