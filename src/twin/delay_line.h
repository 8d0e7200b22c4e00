// DelayLine: items in transit for a fixed delay, in the twin's virtual time (the front
// end's two directions: client -> engine, engine -> client; twin/front_end.h). The delay
// is the same for every item and pushes come in time order, so the FIFO is also the order
// items fall due: push and pop are O(1) and nothing is ever sorted. PushAt (the front end's
// jitter: a delay of its own per item) inserts in due order instead, searching from the
// back, where a new item almost always belongs; items due at the same time keep push order.
//
// Thread-safety: none (one driver).
#pragma once

#include <deque>
#include <iterator>
#include <limits>
#include <utility>

#include "core/clock.h"

namespace infereng::twin {

template <typename T>
class DelayLine {
 public:
  static constexpr Nanos kNever = std::numeric_limits<Nanos>::max();

  explicit DelayLine(Nanos delay = 0) : delay_(delay) {}

  Nanos delay() const { return delay_; }
  bool empty() const { return q_.empty(); }
  size_t size() const { return q_.size(); }
  void Push(Nanos now, T item) { q_.emplace_back(now + delay_, std::move(item)); }
  // An item due at `due` (>= every earlier pop's time), whatever this line's delay.
  void PushAt(Nanos due, T item) {
    auto it = q_.end();
    while (it != q_.begin() && std::prev(it)->first > due) --it;
    q_.emplace(it, due, std::move(item));
  }
  // When the oldest item falls due; kNever when empty.
  Nanos NextDue() const { return q_.empty() ? kNever : q_.front().first; }
  // Drops every item for which pred(item) is true (a cancelled request); O(n), rare.
  template <typename P>
  void EraseIf(P&& pred) {
    std::erase_if(q_, [&pred](const std::pair<Nanos, T>& e) { return pred(e.second); });
  }
  // Calls f(due, item) for every item due at or before `t`, oldest first. `f` may push.
  template <typename F>
  void PopDue(Nanos t, F&& f) {
    while (!q_.empty() && q_.front().first <= t) {
      std::pair<Nanos, T> e = std::move(q_.front());
      q_.pop_front();
      f(e.first, std::move(e.second));
    }
  }

 private:
  Nanos delay_;
  std::deque<std::pair<Nanos, T>> q_;
};

}  // namespace infereng::twin
