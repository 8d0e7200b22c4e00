// SessionTally: calls folded into sessions (see sessions.h).
#include "metrics/sessions.h"

#include <algorithm>

namespace infereng::metrics {

SessionTally::SessionTally(SessionTallyOptions options)
    : options_(std::move(options)),
      latency_ms_(options_.exact, options_.histogram),
      calls_(options_.exact, options_.histogram) {}

void SessionTally::Add(const RequestRecord& r) {
  if (r.session < 0) return;
  any_ = true;
  Session& s = open_[r.session];
  s.planned = std::max({s.planned, r.calls, r.turns});
  ++s.seen;
  if (r.turn > s.step_turn) {
    s.step_turn = r.turn;
    s.step_branches = std::max(r.branches, 1);
    s.step_seen = 0;
  }
  if (r.turn == s.step_turn) ++s.step_seen;
  if (r.turn == 0) s.first_sched = r.t_sched;
  if (r.t_end >= 0) s.last_end = std::max(s.last_end, r.t_end);
  if (r.quality_pass == 0) s.failed = true;  // the final answer failed the eval-set check
  if (r.ok()) {
    ++s.ok;
    const double e2e = r.t_sched >= 0 && r.t_end >= r.t_sched ? NanosToMillis(r.t_end - r.t_sched) : 0;
    s.calls.push_back(Call{r.turn, r.cached_tokens, r.prompt_tokens, e2e});
  } else if (r.error == ErrorClass::kInterrupted || r.error == ErrorClass::kCancelled ||
             r.error == ErrorClass::kIncomplete) {
    s.cut = true;  // the client stopped it: no outcome of the server
  } else {
    s.failed = true;
  }
  // Ended: no further call of it will run (a failed or cut session starts no further step;
  // the calls of its step that were running are all in).
  if (s.seen >= s.planned || ((s.failed || s.cut) && s.step_seen >= s.step_branches)) {
    Fold(s);
    open_.erase(r.session);
  }
}

bool SessionTally::InWindow(const Session& s) const {
  if (s.first_sched < options_.window_start) return false;  // also: turn 0 never seen
  return !options_.window_end || s.first_sched <= std::max(*options_.window_end, options_.window_start);
}

void SessionTally::AddCalls(const Session& s, Tallies& t) const {
  for (const Call& c : s.calls) {
    if (c.cached >= 0 && c.prompt > 0) {
      t.cached += c.cached;
      t.prompt += c.prompt;
      t.reported = true;
    }
    if (c.turn < 0 || c.turn >= kMaxTurnRows) continue;
    while (t.turns.size() <= static_cast<size_t>(c.turn)) t.turns.emplace_back(options_);
    Turn& row = t.turns[static_cast<size_t>(c.turn)];
    ++row.calls;
    row.e2e.Add(c.e2e_ms);
    if (c.cached >= 0 && c.prompt > 0) {
      row.cached += c.cached;
      row.prompt += c.prompt;
      row.reported = true;
    }
  }
}

void SessionTally::Fold(Session& s) {
  if (!InWindow(s)) return;
  ++done_.started;
  if (s.failed) {
    ++done_.failed;
  } else if (s.cut || s.seen < s.planned || s.ok < s.planned) {
    ++done_.incomplete;
  } else {
    ++done_.succeeded;
    const double ms = NanosToMillis(s.last_end - s.first_sched);
    latency_ms_.Add(ms);
    calls_.Add(s.planned);
    if (!options_.task_ms || ms <= *options_.task_ms) ++done_.good;
  }
  AddCalls(s, done_);
}

SessionSummary SessionTally::Finish(double rate_basis_s, bool tasks, double attainment_target) const {
  // Sessions still open are incomplete; their successful calls still count toward reuse.
  Tallies t = done_;
  for (const auto& [id, s] : open_) {
    if (!InWindow(s)) continue;
    ++t.started;
    ++t.incomplete;
    AddCalls(s, t);
  }
  SessionSummary out;
  out.tasks = tasks;
  out.task_ms = options_.task_ms;
  out.task_attainment_target = attainment_target;
  out.started = t.started;
  out.succeeded = t.succeeded;
  out.failed = t.failed;
  out.incomplete = t.incomplete;
  out.good = t.good;
  const int64_t ended = out.succeeded + out.failed;
  out.success_rate = ended > 0 ? static_cast<double>(out.succeeded) / static_cast<double>(ended) : 0;
  out.task_attainment = ended > 0 ? static_cast<double>(out.good) / static_cast<double>(ended) : 0;
  out.task_slo_pass = !options_.task_ms || (ended > 0 && out.task_attainment >= attainment_target);
  if (rate_basis_s > 0) {
    out.per_s = static_cast<double>(out.succeeded) / rate_basis_s;
    out.goodput_per_s = static_cast<double>(out.good) / rate_basis_s;
  }
  out.latency_ms = latency_ms_.Stats();
  out.calls = calls_.Stats();
  if (t.reported) out.prefix_hit_rate = static_cast<double>(t.cached) / static_cast<double>(t.prompt);
  for (size_t i = 0; i < t.turns.size(); ++i) {
    const Turn& row = t.turns[i];
    SessionTurnStats stats;
    stats.turn = static_cast<int32_t>(i);
    stats.calls = row.calls;
    if (row.reported) stats.prefix_hit_rate = static_cast<double>(row.cached) / static_cast<double>(row.prompt);
    stats.e2e_p50_ms = row.e2e.count() > 0 ? row.e2e.Percentile(50) : 0;
    out.by_turn.push_back(stats);
  }
  return out;
}

}  // namespace infereng::metrics
