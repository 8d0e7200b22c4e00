// SessionSource: the load runner's request source for a card with sessions or agent tasks
// (workload/sessions.h), in wall time, as twin/load_client.h does it in virtual time.
//
// A session's next turn exists only once the previous one ended, so the runner cannot be
// handed a precomputed stream: Next() blocks until something is due and returns it with
// t_arrival = its intended time - t0, and the runner (run open loop, no ramp: the ramp is
// applied here) paces the last few hundred microseconds and sends it. What is due:
//  - a session's next turn: released think (tool) time after its previous turn's end, as
//    stamped on the clock when the transport reported it (t_sched = the release);
//  - open loop: the next session's first turn at its (ramped) arrival from the generator;
//  - closed loop: a new session whenever fewer than `users` sessions are active (a user is
//    busy from its session's first send to its last turn's end; ramped like the runner's
//    concurrency), t_sched = when the user became free.
// A start is handed out only kLead before its time, so a turn released meanwhile is not
// queued behind it. Ended() is called by the runner's sink for every finished call.
//
// Thread-safety: Next() from the dispatcher thread; Ended() from transport threads; both
// lock mu_. `stop` (the runner's flag) is polled every few milliseconds while waiting.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "core/clock.h"
#include "metrics/record.h"
#include "workload/sessions.h"

namespace infereng::bench {

struct SessionSourceOptions {
  Nanos t0 = 0;             // the phase's origin on the clock
  bool closed_loop = false;
  int users = 0;            // closed loop: concurrent sessions
  Nanos ramp = 0;           // open loop: arrival ramp; closed loop: users ramp
  Nanos stop_after = 0;     // closed loop: no new session at or after t0 + this (0: none)
};

class SessionSource {
 public:
  static constexpr Nanos kLead = 2 * kNanosPerMilli;

  // `next_start` yields the sessions' first turns (the planner's NextStart, or a shard's
  // share of them); `planner` plans every later turn.
  using StartFn = std::function<std::optional<workload::RequestSpec>()>;
  SessionSource(workload::SessionPlanner& planner, StartFn next_start, Clock& clock, const SessionSourceOptions& options,
                const std::atomic<bool>& stop);

  // The next call to send, or nullopt when stopped or when every session has ended and the
  // generator has no more.
  std::optional<workload::RequestSpec> Next();
  // A call this source handed out finished (its record as the transport reported it).
  void Ended(const metrics::RequestRecord& record);

 private:
  // The next start, peeked from the generator (open loop); lock held.
  void Peek();

  workload::SessionPlanner& planner_;
  StartFn next_start_fn_;
  Clock& clock_;
  SessionSourceOptions opt_;
  const std::atomic<bool>& stop_;

  std::mutex mu_;
  std::condition_variable cv_;
  std::optional<workload::RequestSpec> next_start_;  // guarded by mu_ (open loop)
  bool exhausted_ = false;                           // guarded by mu_: the generator ended
  std::unordered_map<uint64_t, workload::RequestSpec> open_turns_;  // guarded by mu_: sent, by index
  std::multimap<Nanos, workload::RequestSpec> follow_ups_;           // guarded by mu_: by release time
  std::unordered_map<int64_t, Nanos> step_end_;  // guarded by mu_: a session's open step, latest end so far
  std::deque<Nanos> freed_;               // guarded by mu_: closed loop, when users became free
  int active_ = 0;                        // guarded by mu_: closed loop, busy users
};

}  // namespace infereng::bench
