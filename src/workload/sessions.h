// SessionPlanner: multi-turn sessions and agent tasks (card traffic.sessions, agent_steps)
// on top of the ONE generator. The generator's requests become the sessions' first turns
// (arrival time, first prompt length, output length, tenant, shared prefix); the planner
// decides each later turn when the previous one ends: it is released think_time after that
// end (agent tasks: the tool time) and re-sends the conversation so far.
//
// The conversation as tokens: each session owns a deterministic stream of 16-token blocks
// (RequestSpec::block_ids; a shared prefix is the prefix's own blocks first, so sessions
// of one prefix share it). Turn k's prompt is the first L_k tokens of that stream, with
//   L_k = L_{k-1} + answer_{k-1} + new_message_k,
// so turn k's prompt starts with turn k-1's prompt followed by answer_{k-1} tokens: the
// answer's place is taken by a deterministic stand-in of the answer's token count (the
// server's own count, usage.completion_tokens), not the server's text. Prefix caches (the
// embedded engine's and the twin's) therefore see turn k-1's prompt re-sent; the answer
// part hits only as far as an engine caches its own output (ours do not).
//
// Parallel calls (SessionSpec::parallel, the card's agent_parallel): every step after the
// first may be P calls released together (an agent's parallel sub-calls). With S the
// conversation before the step, branch b's prompt is S + its own new message m_b; the step
// ends when its last branch ends, and the next step's conversation is
//   S' = S + sum_b (m_b + answer_b).
// Branch 0 continues the session's stream (its prompt is a prefix of S'); branch b > 0
// shares S's whole blocks and then has blocks of its own, so a prefix cache sees S re-sent
// by every branch and branch 0's prompt re-sent by the next step, as a real agent that
// appends each sub-call's message and answer would. With P = 1 everywhere this is exactly
// the single-chain session above (same draws, same prompts).
//
// Determinism: turn k's draws (output length, new message length, think time) come from a
// stream seeded by (seed, session, turn), so the same card and seed give the same sessions
// whatever order the turns end in; the twin and bench see the same conversations. A session
// ends after its planned turns, after a failed turn (the rest never run: incomplete), or
// when the next prompt would exceed product.max_input_tokens (the conversation is full;
// also incomplete, docs/workload-card.md).
//
// Trace sessions (traffic.arrival.sessions on a trace replay; sessions_trace.cc): the
// sessions are the trace's own. Every call of the window is read at the start (at most
// kMaxTraceSessionCalls) and grouped by session id; a session's calls that arrived within
// parallel_window of their step's first call form one step (parallel calls), the rest
// follow in order. The first step's calls are starts at their trace times; every later
// step is released when the step before it has ended AND no earlier than each call's own
// trace time (FollowUp::not_before): a replay as fast as production keeps the trace's
// times, a slower one holds the user back instead of piling turns on an unanswered
// conversation. Lengths are the trace's; prompts keep the trace's hash_ids, or else come
// from the session's token stream (call k's prompt is the stream's first L_k tokens, so a
// growing conversation re-sends its earlier part); a later branch of a step shares the
// stream up to the previous step's longest prompt, then has its own blocks. A failed call
// ends its session (the rest never run: incomplete), as above.
//
// Without sessions in the card the planner passes the generator through (turns = 1).
// Thread-safety: none; callers that end turns on several threads serialise (bench does).
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "card/card.h"
#include "core/status.h"
#include "workload/generator.h"
#include "workload/request_spec.h"

namespace infereng::workload {

inline constexpr int32_t kSessionBlockTokens = 16;

// Whether the card replays a trace's sessions (traffic.arrival.sessions on a trace).
bool TraceSessions(const card::WorkloadCard& card);

class SessionPlanner {
 public:
  static Result<SessionPlanner> FromCard(const card::WorkloadCard& card, const GeneratorOptions& options);

  bool enabled() const { return enabled_; }
  bool tasks() const { return tasks_; }

  // The next session's first turn (without sessions: the generator's next request), or
  // nullopt at the generator's end (status() says whether on an error).
  std::optional<RequestSpec> NextStart();

  struct FollowUp {
    RequestSpec spec;
    Nanos delay = 0;  // think or tool time: sent this long after the previous step ended
    // Trace sessions: and not before this offset from the run's start (the call's trace
    // time, before any ramp); -1: no such bound.
    Nanos not_before = -1;
  };
  struct CallEnd {
    std::vector<FollowUp> next;  // the next step's calls (all with the same delay), or none
    bool session_over = false;   // no call of the session is open or planned any more
  };
  // `ended` (a call this planner made) finished; `ok` whether it succeeded and
  // `answer_tokens` its output length (< 0: unknown, the target is used). When it was the
  // last open call of its step, returns the next step's calls (none when the session is
  // over: planned steps done, a call of the step failed, or the context is full); while
  // other calls of its step are open, returns none and session_over false.
  CallEnd NextTurn(const RequestSpec& ended, bool ok, int64_t answer_tokens);
  // Calls of steps still open (bounded by the sessions in flight).
  size_t open_steps() const { return steps_.size(); }

  const Status& status() const { return gen_.status(); }
  double MeanRate() const { return gen_.MeanRate(); }

 private:
  SessionPlanner(Generator gen, const card::WorkloadCard& card, uint64_t seed);
  // Trace sessions (sessions_trace.cc): reads the generator's whole window into steps.
  Status LoadTraceSessions(double parallel_window_s);
  std::optional<RequestSpec> NextTraceStart();
  CallEnd NextTraceStep(const RequestSpec& ended, bool ok);
  // A step with calls still open: what the join needs.
  struct OpenStep {
    int32_t turn = 0;
    int32_t open = 0;        // calls not ended yet
    bool failed = false;     // a call of the step failed
    int64_t shared = 0;      // S: the conversation before the step
    int64_t appended = 0;    // sum of the ended calls' message + answer
  };
  // The session's block ids covering spec->input_tokens (prefix blocks first); a branch
  // b > 0 keeps the session's whole blocks within `shared` tokens and then its own.
  void FillBlocks(RequestSpec* spec, int64_t shared) const;
  // The session's planned calls: 1 + the parallel draw of every later step.
  int32_t PlannedCalls(int64_t session, int32_t turns) const;
  int32_t Branches(int64_t session, int32_t turn) const;

  Generator gen_;
  bool enabled_ = false, tasks_ = false;
  card::SessionSpec spec_;
  card::Distribution output_;
  int64_t max_input_ = 0;  // 0: no cap
  uint64_t seed_ = 0;
  uint64_t next_index_ = 0;  // every turn gets its own index (the record id)
  std::unordered_map<int64_t, OpenStep> steps_;  // by session

  // Trace sessions: the first steps' calls in arrival order, and every session's later
  // steps (dropped when the session ends).
  bool trace_mode_ = false;
  std::vector<RequestSpec> trace_starts_;
  size_t trace_next_start_ = 0;
  std::unordered_map<int64_t, std::vector<std::vector<RequestSpec>>> trace_steps_;  // by session: steps 1..
  std::unordered_map<int64_t, int32_t> trace_first_step_;  // by session: calls of its first step
};

// The most calls a trace-session replay reads ahead (the whole window is held in memory).
inline constexpr size_t kMaxTraceSessionCalls = 2'000'000;

}  // namespace infereng::workload
