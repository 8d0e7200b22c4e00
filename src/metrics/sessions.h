// Sessions and agent tasks in a summary: the calls of one session (RequestRecord::session,
// turn, turns) folded into the session's outcome (docs/metrics.md, "Sessions and tasks").
//
// Boundaries: a session belongs to the window when its first call's t_sched does. Its
// latency is the first call's t_sched to the last call's t_end (every call, think or tool
// time between them included; a step of parallel calls lasts until its last call ends).
// It succeeded when all its planned calls (every branch of every step) are recorded and
// succeeded; failed when a call failed (later steps never ran); incomplete otherwise (the
// window's end, an interruption or the context limit cut it: a call was interrupted or
// never sent). Success rate = succeeded / (succeeded + failed). Sessions per second and
// goodput count succeeded (goodput: also within slo.task) sessions over the summary's rate
// basis. The prefix hit rate is cached / prompt tokens over the window's session calls
// that reported cached tokens, overall and by turn.
//
// Thread-safety: none (owned by the SummaryAccumulator, fed from one thread).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "core/clock.h"
#include "core/histogram.h"
#include "core/stats.h"
#include "metrics/record.h"
#include "metrics/sample_sink.h"

namespace infereng::metrics {

struct SessionTurnStats {
  int32_t turn = 0;
  int64_t calls = 0;             // in-window successful calls at this turn
  double prefix_hit_rate = -1;   // -1: no call reported cached tokens
  double e2e_p50_ms = 0;         // incl. queue (from t_sched)

  friend bool operator==(const SessionTurnStats&, const SessionTurnStats&) = default;
};

struct SessionSummary {
  bool tasks = false;            // agent tasks (the card's agent_steps): named "tasks"
  int64_t started = 0;           // first call's t_sched in the window
  int64_t succeeded = 0, failed = 0, incomplete = 0;
  int64_t good = 0;              // succeeded within slo.task (all succeeded without one)
  double per_s = 0;              // succeeded / rate basis
  double goodput_per_s = 0;      // good / rate basis
  double success_rate = 0;       // succeeded / (succeeded + failed); 0 when none ended
  stats::SampleStats latency_ms; // succeeded sessions, first t_sched -> last t_end
  stats::SampleStats calls;      // calls per succeeded session
  double prefix_hit_rate = -1;   // -1: no session call reported cached tokens
  std::optional<double> task_ms;  // slo.task, if the card has one
  double task_attainment = 0;    // good / (succeeded + failed)
  double task_attainment_target = 0;  // slo.attainment
  bool task_slo_pass = true;     // no slo.task, or attainment >= target
  std::vector<SessionTurnStats> by_turn;  // turns 0..kMaxTurnRows-1

  friend bool operator==(const SessionSummary&, const SessionSummary&) = default;
};

// Memory: a session's calls are held only while it is open; when it ends (every planned
// call recorded, a call failed, or one was cut) it is folded into the window's tallies and
// forgotten, so the open map holds about the run's concurrency. The tallies are exact
// samples or LogHistograms, as the accumulator's mode says: in histogram mode the memory
// does not grow with the run.
struct SessionTallyOptions {
  Nanos window_start = 0;            // the window on the first call's t_sched
  std::optional<Nanos> window_end;   // absent: the last t_sched seen (holds every session)
  bool exact = true;                 // exact samples, or LogHistograms
  HistogramOptions histogram;        // histogram mode; values in milliseconds
  std::optional<double> task_ms;     // slo.task: a succeeded session within it is good
};

class SessionTally {
 public:
  static constexpr int32_t kMaxTurnRows = 64;

  explicit SessionTally(SessionTallyOptions options = {});

  void Add(const RequestRecord& r);
  bool any() const { return any_; }
  // The summary's rate basis, the naming and the attainment target. Does not consume the
  // tally; sessions still open count as incomplete.
  SessionSummary Finish(double rate_basis_s, bool tasks, double attainment_target) const;
  // Sessions open now (started, not ended): bounded by the run's concurrency.
  size_t open_sessions() const { return open_.size(); }

 private:
  struct Call {
    int32_t turn;
    int64_t cached, prompt;
    double e2e_ms;
  };
  struct Session {
    Nanos first_sched = -1;      // turn 0's t_sched (-1: not seen)
    Nanos last_end = -1;
    int32_t planned = 1, seen = 0, ok = 0;  // calls planned (RequestRecord::calls), recorded, succeeded
    // The latest step seen: its turn, its calls and how many of them are recorded. A failed
    // session is folded once its failing step's calls are all in (parallel calls end in any
    // order; a session's steps end in order).
    int32_t step_turn = -1, step_branches = 1, step_seen = 0;
    bool failed = false, cut = false;  // a call failed / was interrupted or cancelled
    std::vector<Call> calls;           // successful calls, until the session is folded
  };
  // Prefix reuse and latency of the window's sessions' successful calls at one turn.
  struct Turn {
    explicit Turn(const SessionTallyOptions& o) : e2e(o.exact, o.histogram) {}
    int64_t cached = 0, prompt = 0, calls = 0;
    bool reported = false;
    SampleSink e2e;
  };
  struct Tallies {
    int64_t started = 0, succeeded = 0, failed = 0, incomplete = 0, good = 0;
    int64_t cached = 0, prompt = 0;
    bool reported = false;
    std::vector<Turn> turns;
  };

  bool InWindow(const Session& s) const;
  void AddCalls(const Session& s, Tallies& t) const;
  void Fold(Session& s);

  SessionTallyOptions options_;
  bool any_ = false;
  std::map<int64_t, Session> open_;
  Tallies done_;
  SampleSink latency_ms_, calls_;  // succeeded sessions
};

}  // namespace infereng::metrics
