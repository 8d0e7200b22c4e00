// LoadClient: the benchmark client's side of the twin. It sits before the router and turns
// the ONE workload generator's stream into sends under a workload::ClientLoad (the load
// rule: workload/client_load.h), in virtual time, as bench::LoadRunner does in wall time.
// What each mode means for the twin's timestamps:
//
//  - open loop: a request is sent at its (ramped) arrival; t_sched = t_send.
//  - open loop capped at C: a request that waits for a slot has t_sched = its arrival and
//    t_send = when the slot freed, so schedule lag and the incl.-queue latencies show it.
//  - closed loop: C requests at t = 0 (fewer while ramping), then one per ended request,
//    at the moment it ended: t_sched = t_send = slot freed.
//
// "In flight" = sent and not yet ended; every ending frees its slot (success, timeout,
// rejection, error). One exception: in closed loop a slot freed by a rejection is reused
// kRejectionRoundTrip later. The twin has no network, so an instant 429 answered by an
// instant resend would loop forever at one virtual instant; bench always spends a round
// trip on it.
//
// Sending stops at `horizon`: open loop at the first arrival at or after it (requests that
// arrived before it are all sent, however long they wait); closed loop with no send at or
// after it.
//
// Sessions and agent tasks (workload/sessions.h): when a turn ends, the session's next turn
// is released think (tool) time later, as bench releases it: open loop, it arrives then
// (t_sched = the release) and waits for a slot like any arrival; closed loop, the session
// is the user: a user stays busy from its session's first send to its last turn's end, and
// a released turn is sent at once. A turn released at or after the horizon is not sent
// (the session stays incomplete, as a measured run's window cuts it).
//
// The driver (simulation.cc) calls Wake() at NextWake(), then TakeSend() until it returns
// nothing, and Ended() for every sent request that ends. Thread-safety: none (one driver).
#pragma once

#include <deque>
#include <limits>
#include <map>
#include <optional>
#include <unordered_map>

#include "core/clock.h"
#include "workload/client_load.h"
#include "workload/generator.h"
#include "workload/sessions.h"

namespace infereng::twin {

struct LoadClientOptions {
  workload::ClientLoad load;  // includes the ramp
  Nanos horizon = 0;  // no arrival (open loop) / no send (closed loop) at or after this
};

class LoadClient {
 public:
  static constexpr Nanos kRejectionRoundTrip = kNanosPerMilli;
  static constexpr Nanos kNever = std::numeric_limits<Nanos>::max();

  LoadClient(workload::SessionPlanner gen, const LoadClientOptions& options);

  struct Send {
    workload::RequestSpec spec;
    Nanos t_sched = 0;
    bool arrived_now = false;  // closed loop: the request enters the system as it is sent
  };

  // The next time the client acts on its own: an arrival (open loop), a ramp step or a
  // rejection's round trip ending (closed loop). kNever when none.
  Nanos NextWake() const;
  // Handles what is due at `now` (= NextWake()). Returns the request that arrived (open
  // loop; it now waits in the client until TakeSend releases it), else nullptr.
  const workload::RequestSpec* Wake(Nanos now);
  // The next request to send at `now`, or nothing when none may go (no request waiting,
  // every slot taken, past the horizon).
  std::optional<Send> TakeSend(Nanos now);
  // A sent request ended at `now`; `ok` whether it succeeded, `answer_tokens` its output
  // (a session's next turn re-sends it).
  void Ended(Nanos now, uint64_t id, bool rejected, bool ok, int64_t answer_tokens);
  // No more arrivals (open loop) or sends of new requests (closed loop) from now on; the
  // requests already waiting in the client are still sent. The driver's overload stop.
  void StopArrivals();

  // kNever while more requests may still arrive; else when arrivals ended (open loop: the
  // last arrival or the last send, whichever is later; closed loop: the horizon, or the
  // last send when the generator ran out first). The driver drains from there.
  Nanos DrainFrom(Nanos now) const;
  // Requests that arrived and were not sent yet, oldest first (open loop with a cap).
  const std::deque<Send>& waiting() const { return waiting_; }
  int64_t in_flight() const { return in_flight_; }
  int64_t waiting_peak() const { return waiting_peak_; }  // most left waiting for a slot
  // The time of the last arrival (open loop) or send (closed loop).
  Nanos last_arrival() const { return last_arrival_; }
  const workload::ClientLoad& load() const { return opt_.load; }
  double MeanRate() const { return gen_.MeanRate(); }
  const Status& status() const { return gen_.status(); }

 private:
  void Peek();

  workload::SessionPlanner gen_;
  LoadClientOptions opt_;
  std::unordered_map<uint64_t, workload::RequestSpec> open_turns_;  // session turns sent, by index
  std::multimap<Nanos, workload::RequestSpec> follow_ups_;           // next turns by release time (FIFO on ties)
  std::optional<workload::RequestSpec> next_;  // open loop: the next arrival
  Nanos next_t_ = kNever;                      // its ramped time
  bool exhausted_ = false;                     // the generator has no more requests
  std::deque<Send> waiting_;
  std::deque<Nanos> releases_;                 // closed loop: slots freed after a round trip
  int64_t in_flight_ = 0;
  int64_t waiting_peak_ = 0;
  int limit_ = 0;                              // closed loop: the ramped concurrency now
  Nanos last_arrival_ = 0, last_send_ = 0;
};

}  // namespace infereng::twin
