// SessionTally: calls folded into sessions (see sessions.h).
#include "metrics/sessions.h"

#include <algorithm>

namespace infereng::metrics {

void SessionTally::Add(const RequestRecord& r) {
  if (r.session < 0) return;
  Session& s = sessions_[r.session];
  s.turns = std::max(s.turns, r.turns);
  ++s.seen;
  if (r.turn == 0) s.first_sched = r.t_sched;
  if (r.t_end >= 0) s.last_end = std::max(s.last_end, r.t_end);
  if (r.quality_pass == 0) s.failed = true;  // the final answer failed the eval-set check
  if (r.ok()) {
    ++s.ok;
    const double e2e = r.t_sched >= 0 && r.t_end >= r.t_sched ? NanosToMillis(r.t_end - r.t_sched) : 0;
    calls_.push_back(Call{r.session, r.turn, r.cached_tokens, r.prompt_tokens, e2e});
  } else if (r.error == ErrorClass::kInterrupted || r.error == ErrorClass::kCancelled ||
             r.error == ErrorClass::kIncomplete) {
    s.cut = true;  // the client stopped it: no outcome of the server
  } else {
    s.failed = true;
  }
}

SessionSummary SessionTally::Finish(Nanos window_start, Nanos window_end, double rate_basis_s, bool tasks,
                                    std::optional<double> task_ms, double attainment_target) const {
  SessionSummary out;
  out.tasks = tasks;
  out.task_ms = task_ms;
  out.task_attainment_target = attainment_target;
  auto in_window = [&](const Session& s) {
    return s.first_sched >= window_start && s.first_sched <= window_end;
  };
  std::vector<double> latency, calls;
  for (const auto& [id, s] : sessions_) {
    if (!in_window(s)) continue;
    ++out.started;
    if (s.failed) {
      ++out.failed;
    } else if (s.cut || s.seen < s.turns || s.ok < s.turns) {
      ++out.incomplete;
    } else {
      ++out.succeeded;
      const double ms = NanosToMillis(s.last_end - s.first_sched);
      latency.push_back(ms);
      calls.push_back(s.turns);
      if (!task_ms || ms <= *task_ms) ++out.good;
    }
  }
  const int64_t ended = out.succeeded + out.failed;
  out.success_rate = ended > 0 ? static_cast<double>(out.succeeded) / static_cast<double>(ended) : 0;
  out.task_attainment = ended > 0 ? static_cast<double>(out.good) / static_cast<double>(ended) : 0;
  out.task_slo_pass = !task_ms || (ended > 0 && out.task_attainment >= attainment_target);
  if (rate_basis_s > 0) {
    out.per_s = static_cast<double>(out.succeeded) / rate_basis_s;
    out.goodput_per_s = static_cast<double>(out.good) / rate_basis_s;
  }
  out.latency_ms = stats::SummarizeInPlace(latency);
  out.calls = stats::SummarizeInPlace(calls);

  // Prefix reuse, overall and by turn, over the window's sessions' successful calls.
  struct Turn {
    int64_t cached = 0, prompt = 0, calls = 0;
    bool reported = false;
    std::vector<double> e2e;
  };
  std::vector<Turn> turns;
  int64_t cached = 0, prompt = 0;
  bool reported = false;
  for (const Call& c : calls_) {
    auto it = sessions_.find(c.session);
    if (it == sessions_.end() || !in_window(it->second)) continue;
    if (c.cached >= 0 && c.prompt > 0) {
      cached += c.cached;
      prompt += c.prompt;
      reported = true;
    }
    if (c.turn >= kMaxTurnRows) continue;
    if (turns.size() <= static_cast<size_t>(c.turn)) turns.resize(static_cast<size_t>(c.turn) + 1);
    Turn& t = turns[static_cast<size_t>(c.turn)];
    ++t.calls;
    t.e2e.push_back(c.e2e_ms);
    if (c.cached >= 0 && c.prompt > 0) {
      t.cached += c.cached;
      t.prompt += c.prompt;
      t.reported = true;
    }
  }
  if (reported) out.prefix_hit_rate = static_cast<double>(cached) / static_cast<double>(prompt);
  for (size_t i = 0; i < turns.size(); ++i) {
    Turn& t = turns[i];
    SessionTurnStats row;
    row.turn = static_cast<int32_t>(i);
    row.calls = t.calls;
    if (t.reported) row.prefix_hit_rate = static_cast<double>(t.cached) / static_cast<double>(t.prompt);
    row.e2e_p50_ms = stats::PercentileInPlace(t.e2e, 50);
    out.by_turn.push_back(row);
  }
  return out;
}

}  // namespace infereng::metrics
