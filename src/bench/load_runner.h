// LoadRunner: drives one load phase — open loop (the generator's intended arrival times,
// optionally capped by a concurrency limit) or closed loop (exactly C in flight).
//
// One dispatcher thread (the caller's) pulls specs, prepares the next request *before*
// sleeping to its send time (so body building never delays a send), paces on the clock to
// the absolute intended time (schedule.h), and hands the request to the Transport.
// Completions arrive on transport threads: they stamp the slot-freed time, forward the
// finished record to the sink and wake the dispatcher. Nothing else happens there.
//
// t_sched semantics (metrics.md): open loop — the intended send time, even when a
// concurrency cap or a slow client delays the actual send (the delay stays visible as
// t_send - t_sched); closed loop — when the concurrency slot freed.
//
// Memory and time stay bounded whatever the load asks: at most max_in_flight requests are
// in flight (the generator is pulled one spec at a time, so requests held back are not
// materialised: they wait as the generator's next arrival), and an open loop that is still
// behind its schedule drain_timeout after the last intended send stops sending
// (fell_behind) instead of working through an unbounded backlog.
//
// Thread-safety: Run() is called once per instance from one thread; the sink is called
// concurrently from transport threads and must be thread-safe. Stop() may be called from
// any thread (signal watcher): no new sends, in-flight requests are cancelled.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>

#include "bench/transport.h"
#include "core/clock.h"
#include "core/status.h"
#include "workload/request_spec.h"

namespace infereng::bench {

// The client's ceiling on requests in flight (a connection and buffers each): an open loop
// faster than the target answers would otherwise grow without bound.
inline constexpr int kMaxInFlight = 10'000;

struct RunnerOptions {
  enum class Mode { kOpenLoop, kClosedLoop };
  Mode mode = Mode::kOpenLoop;
  Nanos t0 = -1;               // the phase's time origin on the clock (-1: when Run starts)
  int concurrency = 0;         // closed loop: C (required); open loop: cap, 0 = none
  Nanos ramp = 0;              // ramp-up (rate in open loop, concurrency in closed loop)
  Nanos stop_after = 0;        // no send intended at or after t0 + stop_after (0 = no limit)
  int64_t max_requests = -1;   // stop after issuing this many measured requests (-1 = no limit)
  Nanos measure_from = 0;      // requests intended at or after t0 + measure_from are measured
  Nanos measure_until = 0;     // ... and before t0 + measure_until (0 = no end): duration mode
  Nanos cooldown = 0;          // requests mode: keep the load on this long after the last one
  Nanos drain_timeout = 30 * kNanosPerSecond;  // wait for in-flight after the last send
  Nanos cancel_grace = 5 * kNanosPerSecond;    // wait for cancelled requests to report
  int max_in_flight = kMaxInFlight;  // never more in flight (closed loop: concurrency must fit)
};

struct RunnerStats {
  Nanos t0 = 0;            // start of the phase (steady clock)
  Nanos t_last_sched = -1; // latest intended send
  Nanos t_last_measured = -1;  // latest intended send counted toward max_requests
  int64_t measured = 0;    // requests intended at or after measure_from (before cool-down)
  Nanos t_end = 0;         // all requests finished (or given up on)
  int64_t issued = 0;
  int64_t completed = 0;   // `done` calls received (every outcome)
  int64_t lost = 0;        // issued but never reported within cancel_grace (a transport bug)
  bool interrupted = false;
  bool drained = true;     // false when in-flight had to be cancelled after drain_timeout
  int64_t held_by_ceiling = 0;  // open loop: sends that waited for max_in_flight (not the user's cap)
  bool fell_behind = false;     // open loop: stopped sending, still behind schedule at stop_after + drain_timeout
};

using SpecSource = std::function<std::optional<workload::RequestSpec>()>;
using Preparer = std::function<Result<PreparedRequest>(const workload::RequestSpec&)>;
using Sink = std::function<void(Finished&&)>;

class LoadRunner {
 public:
  LoadRunner(Clock& clock, Transport& transport) : clock_(clock), transport_(transport) {}

  // Runs until the source is exhausted, a limit is reached or Stop() is called. Returns an
  // error only when preparing a request failed (bad dataset, ...); the stats are still valid.
  Result<RunnerStats> Run(const RunnerOptions& opt, const SpecSource& next, const Preparer& prepare,
                          const Sink& sink);

  void Stop();
  // Set by Stop(): a source that blocks (bench/session_source.h) polls it.
  const std::atomic<bool>& stopping() const { return stop_; }
  int64_t InFlight() const;
  int64_t Issued() const { return issued_.load(std::memory_order_relaxed); }
  int64_t Completed() const { return completed_.load(std::memory_order_relaxed); }

 private:
  void Launch(PreparedRequest req, const Sink& sink);
  // Waits until fewer than `limit` are in flight (limit recomputed by `limit_at`). Returns
  // false when stopped. Pops the oldest slot-freed time into *freed_at when there is one.
  bool WaitForSlot(const std::function<int(Nanos)>& limit_at, Nanos* freed_at, bool ramping = false);

  Clock& clock_;
  Transport& transport_;
  std::atomic<bool> stop_{false};
  bool closed_loop_ = false;       // set before the first Launch
  std::atomic<int64_t> issued_{0};
  std::atomic<int64_t> completed_{0};

  mutable std::mutex mu_;
  std::condition_variable cv_;
  int64_t in_flight_ = 0;          // guarded by mu_
  std::deque<Nanos> freed_;        // guarded by mu_: slot-freed times not yet reused
};

}  // namespace infereng::bench
