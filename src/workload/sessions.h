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
// Determinism: turn k's draws (output length, new message length, think time) come from a
// stream seeded by (seed, session, turn), so the same card and seed give the same sessions
// whatever order the turns end in; the twin and bench see the same conversations. A session
// ends after its planned turns, after a failed turn (the rest never run: incomplete), or
// when the next prompt would exceed product.max_input_tokens (the conversation is full;
// also incomplete, docs/workload-card.md).
//
// Without sessions in the card the planner passes the generator through (turns = 1).
// Thread-safety: none; callers that end turns on several threads serialise (bench does).
#pragma once

#include <cstdint>
#include <optional>

#include "card/card.h"
#include "core/status.h"
#include "workload/generator.h"
#include "workload/request_spec.h"

namespace infereng::workload {

inline constexpr int32_t kSessionBlockTokens = 16;

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
    Nanos delay = 0;  // think or tool time: sent this long after the previous turn ended
  };
  // `ended` (a turn this planner made) finished; `ok` whether it succeeded and `answer_tokens`
  // its output length (< 0: unknown, the target is used). Returns the session's next turn,
  // or nullopt when the session is over.
  std::optional<FollowUp> NextTurn(const RequestSpec& ended, bool ok, int64_t answer_tokens);

  const Status& status() const { return gen_.status(); }
  double MeanRate() const { return gen_.MeanRate(); }

 private:
  SessionPlanner(Generator gen, const card::WorkloadCard& card, uint64_t seed);
  // The session's block ids covering `tokens` tokens (prefix blocks first).
  void FillBlocks(RequestSpec* spec) const;

  Generator gen_;
  bool enabled_ = false, tasks_ = false;
  card::SessionSpec spec_;
  card::Distribution output_;
  int64_t max_input_ = 0;  // 0: no cap
  uint64_t seed_ = 0;
  uint64_t next_index_ = 0;  // every turn gets its own index (the record id)
};

}  // namespace infereng::workload
