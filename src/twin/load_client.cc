#include "twin/load_client.h"

#include <algorithm>

namespace infereng::twin {

LoadClient::LoadClient(workload::Generator gen, const LoadClientOptions& options)
    : gen_(std::move(gen)), opt_(options) {
  if (opt_.load.closed_loop) {
    limit_ = workload::RampedConcurrency(opt_.load.concurrency, 0, opt_.load.ramp);
  } else {
    Peek();
  }
}

void LoadClient::Peek() {
  next_ = gen_.Next();
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
  if (!opt_.load.closed_loop) return next_t_;
  Nanos t = releases_.empty() ? kNever : releases_.front();
  if (!exhausted_ && limit_ < opt_.load.concurrency) {
    const Nanos rise = workload::RampedConcurrencyRisesAt(opt_.load.concurrency, limit_, opt_.load.ramp);
    if (rise < opt_.horizon) t = std::min(t, rise);
  }
  return t;
}

const workload::RequestSpec* LoadClient::Wake(Nanos now) {
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
    if (exhausted_ || now >= opt_.horizon || in_flight_ >= limit_) return std::nullopt;
    std::optional<workload::RequestSpec> spec = gen_.Next();
    if (!spec) {
      exhausted_ = true;
      return std::nullopt;
    }
    ++in_flight_;
    last_arrival_ = last_send_ = now;
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
  return s;
}

void LoadClient::Ended(Nanos now, bool rejected) {
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
  if (opt_.load.closed_loop) {
    if (exhausted_) return last_send_;
    return now >= opt_.horizon ? std::max(last_send_, opt_.horizon) : kNever;
  }
  return next_ ? kNever : std::max(last_arrival_, last_send_);
}

}  // namespace infereng::twin
