// SessionSource: sessions and agent tasks released in wall time (see session_source.h).
#include "bench/session_source.h"

#include <algorithm>
#include <chrono>

#include "workload/client_load.h"

namespace infereng::bench {
namespace {

constexpr Nanos kPoll = 10 * kNanosPerMilli;  // the longest wait before looking at `stop` again

}  // namespace

SessionSource::SessionSource(workload::SessionPlanner& planner, StartFn next_start, Clock& clock,
                             const SessionSourceOptions& options, const std::atomic<bool>& stop)
    : planner_(planner), next_start_fn_(std::move(next_start)), clock_(clock), opt_(options), stop_(stop) {
  if (!opt_.closed_loop) Peek();
}

void SessionSource::Peek() {
  next_start_ = next_start_fn_();
  if (!next_start_) exhausted_ = true;
}

std::optional<workload::RequestSpec> SessionSource::Next() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    if (stop_.load()) return std::nullopt;
    const Nanos now = clock_.Now();
    Nanos wake = now + kPoll;
    // A session's next turn whose release is (about) due.
    if (!follow_ups_.empty()) {
      auto it = follow_ups_.begin();
      if (it->first <= now + kLead) {
        workload::RequestSpec spec = std::move(it->second);
        spec.t_arrival = it->first - opt_.t0;
        follow_ups_.erase(it);
        open_turns_.emplace(spec.index, spec);
        return spec;
      }
      wake = std::min(wake, it->first - kLead);
    }
    if (!opt_.closed_loop) {
      if (next_start_) {
        const Nanos t = opt_.t0 + workload::RampedOffset(next_start_->t_arrival, opt_.ramp);
        if (t <= now + kLead) {
          workload::RequestSpec spec = std::move(*next_start_);
          spec.t_arrival = t - opt_.t0;
          Peek();
          open_turns_.emplace(spec.index, spec);
          return spec;
        }
        wake = std::min(wake, t - kLead);
      }
    } else if (!exhausted_ && (opt_.stop_after <= 0 || now - opt_.t0 < opt_.stop_after) &&
               active_ < workload::RampedConcurrency(opt_.users, now - opt_.t0, opt_.ramp)) {
      std::optional<workload::RequestSpec> spec = next_start_fn_();
      if (!spec) {
        exhausted_ = true;
        continue;
      }
      Nanos t_sched = now;
      if (!freed_.empty()) {
        t_sched = freed_.front();  // closed loop: from when the user became free
        freed_.pop_front();
      }
      ++active_;
      spec->t_arrival = std::max<Nanos>(0, t_sched - opt_.t0);
      open_turns_.emplace(spec->index, *spec);
      return spec;
    }
    const bool starts_left = opt_.closed_loop ? !exhausted_ && (opt_.stop_after <= 0 || now - opt_.t0 < opt_.stop_after)
                                              : next_start_.has_value();
    if (!starts_left && follow_ups_.empty() && open_turns_.empty()) return std::nullopt;
    const Nanos wait = std::clamp<Nanos>(wake - now, kNanosPerMicro * 100, kPoll);
    cv_.wait_for(lock, std::chrono::nanoseconds(wait));
  }
}

void SessionSource::Ended(const metrics::RequestRecord& record) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = open_turns_.find(record.id);
    if (it == open_turns_.end()) return;
    workload::SessionPlanner::CallEnd next = planner_.NextTurn(it->second, record.ok(), record.OutputTokens());
    Nanos end = record.t_end >= 0 ? record.t_end : clock_.Now();
    // With several io threads the calls of a step may be reported out of their end order:
    // the step ends at the latest end among its calls, not at the last one reported.
    const int64_t session = it->second.session;
    open_turns_.erase(it);
    if (next.next.empty() && !next.session_over) {
      Nanos& latest = step_end_[session];
      latest = std::max(latest, end);
      return;
    }
    if (auto s = step_end_.find(session); s != step_end_.end()) {
      end = std::max(end, s->second);
      step_end_.erase(s);
    }
    // The next step's calls are released together; none while other calls of this step run.
    // A trace session's call also waits for its trace time (not_before, ramped as starts are).
    for (workload::SessionPlanner::FollowUp& f : next.next) {
      Nanos release = end + f.delay;
      if (f.not_before >= 0) release = std::max(release, opt_.t0 + workload::RampedOffset(f.not_before, opt_.ramp));
      follow_ups_.emplace(release, std::move(f.spec));
    }
    if (next.session_over && opt_.closed_loop) {
      --active_;
      freed_.push_back(end);
    }
  }
  cv_.notify_all();
}

}  // namespace infereng::bench
