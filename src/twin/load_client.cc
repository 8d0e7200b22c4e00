#include "twin/load_client.h"

#include <algorithm>

namespace infereng::twin {

LoadClient::LoadClient(workload::SessionPlanner gen, const LoadClientOptions& options)
    : gen_(std::move(gen)), opt_(options) {
  if (opt_.load.closed_loop) {
    limit_ = workload::RampedConcurrency(opt_.load.concurrency, 0, opt_.load.ramp);
  } else {
    Peek();
  }
}

void LoadClient::Peek() {
  next_ = gen_.NextStart();
  next_t_ = kNever;
  if (!next_) {
    exhausted_ = true;
    return;
  }
  const Nanos t = workload::RampedOffset(next_->t_arrival, opt_.load.ramp);
  if (t >= opt_.horizon) {  // the generator's horizon is on unramped time
    next_.reset();
    exhausted_ = true;
    return;
  }
  next_t_ = t;
}

Nanos LoadClient::NextWake() const {
  const Nanos follow = follow_ups_.empty() ? kNever : follow_ups_.begin()->first;
  if (!opt_.load.closed_loop) return std::min(next_t_, follow);
  Nanos t = std::min(follow, releases_.empty() ? kNever : releases_.front());
  if (!exhausted_ && limit_ < opt_.load.concurrency) {
    const Nanos rise = workload::RampedConcurrencyRisesAt(opt_.load.concurrency, limit_, opt_.load.ramp);
    if (rise < opt_.horizon) t = std::min(t, rise);
  }
  return t;
}

const workload::RequestSpec* LoadClient::Wake(Nanos now) {
  // A session's next turn due: it arrives now (closed loop: its user is already counted).
  if (!follow_ups_.empty() && follow_ups_.begin()->first <= now) {
    auto it = follow_ups_.begin();
    waiting_.push_back(Send{std::move(it->second), it->first, opt_.load.closed_loop});
    follow_ups_.erase(it);
    if (opt_.load.closed_loop) return nullptr;  // Arrive() when sent (arrived_now)
    last_arrival_ = std::max(last_arrival_, now);
    return &waiting_.back().spec;
  }
  if (opt_.load.closed_loop) {
    while (!releases_.empty() && releases_.front() <= now) {
      releases_.pop_front();
      --in_flight_;
    }
    limit_ = workload::RampedConcurrency(opt_.load.concurrency, now, opt_.load.ramp);
    return nullptr;
  }
  if (!next_ || next_t_ > now) return nullptr;
  waiting_.push_back(Send{*next_, next_t_, false});
  last_arrival_ = next_t_;
  Peek();
  return &waiting_.back().spec;
}

std::optional<LoadClient::Send> LoadClient::TakeSend(Nanos now) {
  if (opt_.load.closed_loop) {
    if (!waiting_.empty()) {  // a session's next turn: its user is busy already
      Send s = std::move(waiting_.front());
      waiting_.pop_front();
      last_arrival_ = last_send_ = now;
      open_turns_.emplace(s.spec.index, s.spec);
      return s;
    }
    if (exhausted_ || now >= opt_.horizon || in_flight_ >= limit_) return std::nullopt;
    std::optional<workload::RequestSpec> spec = gen_.NextStart();
    if (!spec) {
      exhausted_ = true;
      return std::nullopt;
    }
    ++in_flight_;
    last_arrival_ = last_send_ = now;
    if (spec->session >= 0) open_turns_.emplace(spec->index, *spec);
    return Send{*spec, now, true};
  }
  if (waiting_.empty()) return std::nullopt;
  if (opt_.load.concurrency > 0 && in_flight_ >= opt_.load.concurrency) {
    waiting_peak_ = std::max<int64_t>(waiting_peak_, static_cast<int64_t>(waiting_.size()));
    return std::nullopt;
  }
  Send s = waiting_.front();
  waiting_.pop_front();
  ++in_flight_;
  last_send_ = now;
  if (s.spec.session >= 0) open_turns_.emplace(s.spec.index, s.spec);
  return s;
}

void LoadClient::Ended(Nanos now, uint64_t id, bool rejected, bool ok, int64_t answer_tokens) {
  bool continues = false;
  if (auto it = open_turns_.find(id); it != open_turns_.end()) {
    workload::SessionPlanner::CallEnd end = gen_.NextTurn(it->second, ok && !rejected, answer_tokens);
    open_turns_.erase(it);
    // Other calls of its step still run: the session (closed loop: the user) goes on.
    continues = !end.session_over;
    // A step due at or after the horizon is never sent (the window cut the session).
    // A trace session's call also waits for its trace time (not_before, ramped as starts are).
    for (workload::SessionPlanner::FollowUp& f : end.next) {
      Nanos release = now + f.delay;
      if (f.not_before >= 0) release = std::max(release, workload::RampedOffset(f.not_before, opt_.load.ramp));
      if (release >= opt_.horizon) {
        continues = false;
        break;
      }
      follow_ups_.emplace(release, std::move(f.spec));
    }
  }
  if (opt_.load.closed_loop && continues) return;  // the user stays with its session
  if (opt_.load.closed_loop && rejected) {
    releases_.push_back(now + kRejectionRoundTrip);  // `now` never decreases: stays sorted
    return;
  }
  --in_flight_;
}

void LoadClient::StopArrivals() {
  next_.reset();
  next_t_ = kNever;
  exhausted_ = true;
}

Nanos LoadClient::DrainFrom(Nanos now) const {
  if (!follow_ups_.empty()) return kNever;  // sessions still have turns to send
  if (opt_.load.closed_loop) {
    if (exhausted_) return last_send_;
    return now >= opt_.horizon ? std::max(last_send_, opt_.horizon) : kNever;
  }
  return next_ ? kNever : std::max(last_arrival_, last_send_);
}

}  // namespace infereng::twin
