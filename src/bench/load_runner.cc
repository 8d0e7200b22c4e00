#include "bench/load_runner.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <utility>

#include "bench/schedule.h"

namespace infereng::bench {

void LoadRunner::Stop() {
  stop_.store(true);
  cv_.notify_all();
}

int64_t LoadRunner::InFlight() const {
  std::lock_guard<std::mutex> lock(mu_);
  return in_flight_;
}

void LoadRunner::Launch(PreparedRequest req, const Sink& sink) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++in_flight_;
  }
  issued_.fetch_add(1, std::memory_order_relaxed);
  transport_.Start(std::move(req), [this, &sink](Finished&& f) {
    const Nanos freed = clock_.Now();
    sink(std::move(f));
    {
      std::lock_guard<std::mutex> lock(mu_);
      --in_flight_;
      // Lanes complete concurrently: a slot stamped earlier can arrive here later. Keep the
      // queue in time order so the oldest freed slot is reused first.
      if (closed_loop_) freed_.insert(std::upper_bound(freed_.begin(), freed_.end(), freed), freed);
      completed_.fetch_add(1, std::memory_order_relaxed);
    }
    cv_.notify_all();
  });
}

bool LoadRunner::WaitForSlot(const std::function<int(Nanos)>& limit_at, Nanos* freed_at, bool ramping) {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    if (stop_.load()) return false;
    const int limit = limit_at(clock_.Now());
    if (limit <= 0 || in_flight_ < limit) break;
    // Completions and Stop() notify; a ramp raises the limit with time, so poll then.
    cv_.wait_for(lock, ramping ? std::chrono::milliseconds(1) : std::chrono::milliseconds(100));
  }
  if (freed_at != nullptr) {
    if (!freed_.empty()) {
      *freed_at = freed_.front();
      freed_.pop_front();
    } else {
      *freed_at = -1;
    }
  }
  return true;
}

Result<RunnerStats> LoadRunner::Run(const RunnerOptions& opt, const SpecSource& next,
                                    const Preparer& prepare, const Sink& sink) {
  RunnerStats st;
  closed_loop_ = opt.mode == RunnerOptions::Mode::kClosedLoop;
  if (closed_loop_ && opt.concurrency <= 0) {
    return Status::InvalidArgument("closed loop needs a concurrency of at least 1");
  }
  if (opt.max_in_flight < 1 || (closed_loop_ && opt.concurrency > opt.max_in_flight)) {
    return Status::InvalidArgument("concurrency " + std::to_string(opt.concurrency) + " exceeds the client's limit of " +
                                   std::to_string(opt.max_in_flight) + " requests in flight");
  }
  // Open loop: the user's cap, or the client's ceiling when that is lower (or no cap).
  const bool ceiling_binds = opt.concurrency <= 0 || opt.concurrency > opt.max_in_flight;
  const int open_cap = ceiling_binds ? opt.max_in_flight : opt.concurrency;
  st.t0 = opt.t0 >= 0 ? opt.t0 : clock_.Now();
  Status failure;
  PaceUntil(clock_, st.t0, stop_);  // a t0 set ahead: nothing is sent before it
  Nanos stop_after = opt.stop_after;
  bool cooling = false;  // requests mode: the measured count is reached, cool-down running

  for (;;) {
    if (stop_.load()) break;
    if (!cooling && opt.max_requests >= 0 && st.measured >= opt.max_requests) {
      if (opt.cooldown <= 0) break;
      cooling = true;
      stop_after = st.t_last_measured - st.t0 + opt.cooldown;
    }
    std::optional<workload::RequestSpec> spec = next();
    if (!spec) break;

    Nanos t_sched = -1;
    if (!closed_loop_) {
      const Nanos offset = RampedOffset(spec->t_arrival, opt.ramp);
      if (stop_after > 0 && offset >= stop_after) break;
      t_sched = st.t0 + offset;
    } else if (stop_after > 0 && clock_.Now() - st.t0 >= stop_after) {
      break;
    }

    // Prepare first: body building happens in the slack before the send time.
    Result<PreparedRequest> prepared = prepare(*spec);
    if (!prepared.ok()) {
      failure = prepared.status();
      break;
    }
    PreparedRequest req = std::move(prepared).value();

    if (!closed_loop_) {
      if (!PaceUntil(clock_, t_sched, stop_)) break;
      if (ceiling_binds && InFlight() >= open_cap) ++st.held_by_ceiling;
      if (!WaitForSlot([&](Nanos) { return open_cap; }, nullptr)) break;
      // Still sending the window's requests a drain timeout after the window: the client
      // (or its ceiling) cannot keep up with this rate; stop rather than run on unbounded.
      if (stop_after > 0 && clock_.Now() - st.t0 >= stop_after + opt.drain_timeout) {
        st.fell_behind = true;
        break;
      }
    } else {
      const Nanos t0 = st.t0;
      Nanos freed = -1;
      if (!WaitForSlot([&](Nanos now) { return RampedConcurrency(opt.concurrency, now - t0, opt.ramp); },
                       &freed, clock_.Now() - t0 < opt.ramp)) {
        break;
      }
      if (stop_after > 0 && clock_.Now() - st.t0 >= stop_after) break;
      t_sched = freed >= 0 ? freed : clock_.Now();
    }
    req.record.t_sched = t_sched;
    // The latest, not the last: in a closed loop a slot freed earlier can be handed out after
    // one freed later (its completion reached the runner later), and the window must still
    // hold every measured request.
    st.t_last_sched = std::max(st.t_last_sched, t_sched);
    if (!cooling && t_sched - st.t0 >= opt.measure_from &&
        (opt.measure_until <= 0 || t_sched - st.t0 < opt.measure_until)) {
      ++st.measured;
      st.t_last_measured = std::max(st.t_last_measured, t_sched);
    }
    Launch(std::move(req), sink);
  }

  // Drain: let in-flight requests finish, up to drain_timeout (unless interrupted).
  {
    std::unique_lock<std::mutex> lock(mu_);
    // Real time, not clock_: a fake clock in tests must not turn this into a hang.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::nanoseconds(opt.drain_timeout);
    while (in_flight_ > 0 && !stop_.load() && std::chrono::steady_clock::now() < deadline) {
      cv_.wait_for(lock, std::chrono::milliseconds(5));
    }
    if (in_flight_ > 0) {
      st.drained = false;
      lock.unlock();
      transport_.CancelAll();
      lock.lock();
      const auto grace = std::chrono::steady_clock::now() + std::chrono::nanoseconds(opt.cancel_grace);
      while (in_flight_ > 0 && std::chrono::steady_clock::now() < grace) {
        cv_.wait_for(lock, std::chrono::milliseconds(5));
      }
    }
    st.lost = in_flight_;
  }
  st.interrupted = stop_.load();
  st.issued = issued_.load();
  st.completed = completed_.load();
  st.t_end = clock_.Now();
  if (!failure.ok()) return failure;
  return st;
}

}  // namespace infereng::bench
