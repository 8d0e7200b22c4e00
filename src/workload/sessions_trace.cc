// SessionPlanner's trace sessions (see sessions.h, "Trace sessions"): a trace's session ids
// replayed as sessions or agent tasks. A file of its own because it is a second way to plan
// the same steps: the card's sessions draw each step when the previous one ends; here every
// step is read from the trace before the run and only released at run time.
#include <algorithm>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

#include "workload/sessions.h"

namespace infereng::workload {

Status SessionPlanner::LoadTraceSessions(double parallel_window_s) {
  trace_mode_ = true;
  const Nanos window = SecondsToNanos(std::max(0.0, parallel_window_s));
  // Every call of the window, by session, in the trace's order.
  std::unordered_map<int64_t, std::vector<RequestSpec>> calls;
  std::vector<int64_t> order;  // sessions by first call
  size_t n = 0;
  while (std::optional<RequestSpec> r = gen_.Next()) {
    if (++n > kMaxTraceSessionCalls) {
      return Status::InvalidArgument(fmt::format(
          "traffic.arrival.sessions: the trace's window has more than {} calls, which a session replay holds in "
          "memory; narrow it (--trace-requests, --trace-duration)",
          kMaxTraceSessionCalls));
    }
    std::vector<RequestSpec>& v = calls[r->session];
    if (v.empty()) order.push_back(r->session);
    v.push_back(std::move(*r));
  }
  INFERENG_RETURN_IF_ERROR(gen_.status());

  for (const int64_t session : order) {
    std::vector<RequestSpec>& v = calls[session];
    // Steps: a call within the window of its step's first call joins that step.
    std::vector<std::vector<RequestSpec>> steps;
    for (RequestSpec& c : v) {
      if (steps.empty() || c.t_arrival - steps.back().front().t_arrival > window) steps.emplace_back();
      steps.back().push_back(std::move(c));
    }
    const auto turns = static_cast<int32_t>(std::min<size_t>(steps.size(), INT32_MAX));
    const auto total = static_cast<int32_t>(std::min<size_t>(v.size(), INT32_MAX));
    int64_t previous_longest = 0;  // the longest prompt of the step before
    for (int32_t k = 0; k < turns; ++k) {
      std::vector<RequestSpec>& step = steps[static_cast<size_t>(k)];
      int64_t longest = 0;
      for (size_t b = 0; b < step.size(); ++b) {
        RequestSpec& c = step[b];
        c.turn = k;
        c.turns = turns;
        c.branch = static_cast<int32_t>(b);
        c.branches = static_cast<int32_t>(step.size());
        c.calls = total;
        // No hash_ids: the session's own token stream (sessions.h).
        if (c.block_ids.empty()) {
          c.prefix_id = -1;
          c.prefix_tokens = 0;
          FillBlocks(&c, std::min<int64_t>(previous_longest, c.input_tokens));
        }
        longest = std::max<int64_t>(longest, c.input_tokens);
      }
      previous_longest = longest;
    }
    trace_first_step_[session] = static_cast<int32_t>(steps.front().size());
    for (RequestSpec& c : steps.front()) trace_starts_.push_back(std::move(c));
    if (steps.size() > 1) {
      steps.erase(steps.begin());
      trace_steps_.emplace(session, std::move(steps));
    }
    calls.erase(session);
  }
  // The first steps go out at their trace times, whichever session they belong to.
  std::stable_sort(trace_starts_.begin(), trace_starts_.end(),
                   [](const RequestSpec& a, const RequestSpec& b) { return a.t_arrival < b.t_arrival; });
  return Status::Ok();
}

std::optional<RequestSpec> SessionPlanner::NextTraceStart() {
  if (trace_next_start_ >= trace_starts_.size()) {
    trace_starts_ = {};  // every start was handed out: free them
    trace_next_start_ = 0;
    return std::nullopt;
  }
  RequestSpec r = std::move(trace_starts_[trace_next_start_++]);
  // The session's first step opens with its first call (its other calls follow at theirs).
  if (auto it = trace_first_step_.find(r.session); it != trace_first_step_.end()) {
    steps_[r.session] = OpenStep{0, it->second, false, 0, 0};
    trace_first_step_.erase(it);
  }
  return r;
}

SessionPlanner::CallEnd SessionPlanner::NextTraceStep(const RequestSpec& ended, bool ok) {
  CallEnd out;
  auto it = steps_.find(ended.session);
  if (it == steps_.end() || it->second.turn != ended.turn) {
    out.session_over = true;  // not a call of this planner's open step
    return out;
  }
  if (!ok) it->second.failed = true;
  if (--it->second.open > 0) return out;  // calls of its step still open (or not yet started)
  const bool failed = it->second.failed;
  steps_.erase(it);
  out.session_over = true;
  auto later = trace_steps_.find(ended.session);
  if (later == trace_steps_.end()) return out;  // that was its last step
  // later->second[k] is step k + 1.
  const auto k = static_cast<size_t>(ended.turn);
  if (failed || k >= later->second.size()) {
    trace_steps_.erase(later);  // a failed call ends the session: the rest never run
    return out;
  }
  std::vector<RequestSpec>& step = later->second[k];
  out.next.reserve(step.size());
  for (RequestSpec& c : step) {
    FollowUp f;
    f.not_before = c.t_arrival;  // its trace time
    f.spec = std::move(c);
    f.spec.t_arrival = 0;        // released by the caller (sessions.h)
    out.next.push_back(std::move(f));
  }
  steps_[ended.session] = OpenStep{ended.turn + 1, static_cast<int32_t>(out.next.size()), false, 0, 0};
  if (k + 1 >= later->second.size()) trace_steps_.erase(later);
  out.session_over = false;
  return out;
}

}  // namespace infereng::workload
