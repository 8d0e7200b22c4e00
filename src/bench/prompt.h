// PromptBuilder: synthetic prompt text of an exact target token length, with shared
// prefixes (same prefix id -> the same leading text, byte for byte) and, for trace replay,
// the trace's prefix structure (requests whose block_ids share leading ids share exactly
// that leading text: block_tokens tokens per block, the last block cut at the length).
//
// Text is a seeded sequence of common English words ("the time people water ..."), each a
// single token with a leading space in the usual BPE vocabularies and exactly one token
// under the embedded engine's whitespace rule. Words needed for T tokens come from a linear
// model tokens = a * words + b:
//   - measured with the server's /tokenize when it has one (TokenizeCounter, engine_probe.h);
//     prompts are then checked against /tokenize and trimmed/extended until exact — but
//     only in Prepare(), before a phase starts: /tokenize round trips between a request's
//     scheduled time and its send would show up as schedule lag (prompt_setup.h);
//   - otherwise fitted from pre-run requests' usage.prompt_tokens (SetModel), and re-fitted
//     from usage.prompt_tokens of finished warm-up requests (Observe, Refit). The achieved
//     length distribution is always reported (LengthReport), never assumed.
//
// Thread-safety: Build() from the dispatcher thread and Observe() from completion threads
// may run concurrently (the model is behind a mutex; the counter is only used in Prepare).
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/status.h"
#include "workload/request_spec.h"

namespace infereng::bench {

// Counts the tokens of a prompt text the way the target will (POST /tokenize).
using TokenCountFn = std::function<Result<int64_t>(const std::string& text)>;

struct LengthModel {
  double tokens_per_word = 1.0;
  double overhead_tokens = 0.0;  // BOS, chat template ...
  int WordsFor(int64_t tokens) const;
};

// Achieved vs target prompt lengths, from usage.prompt_tokens.
struct LengthReport {
  int64_t samples = 0;
  int64_t exact = 0;             // prompt_tokens == target
  double mean_abs_error = 0;     // tokens
  int64_t max_abs_error = 0;
  double mean_ratio = 0;         // achieved / target
};

class PromptBuilder {
 public:
  // `counter` may be empty (no /tokenize): calibration then comes from Observe().
  explicit PromptBuilder(uint64_t seed, TokenCountFn counter = {});

  // Fits the length model with the counter (a few /tokenize calls). No-op without one.
  Status Calibrate();

  // Builds and checks (with the counter) the prompts of `specs` now, and keeps them for
  // Build(); from then on Build() never calls the counter. Call before each phase (after
  // SetSalt). Returns how many prompts came out exact.
  Result<int64_t> Prepare(const std::vector<workload::RequestSpec>& specs);

  // The prompt for one request: prefix text (prefix_tokens of it, shared by prefix_id) +
  // a request-specific body, input_tokens in total. A prompt Prepare() made is returned as
  // made; any other comes from the length model (the counter is only used before Prepare).
  Result<std::string> Build(const workload::RequestSpec& spec);

  // A finished request's target and server-reported prompt length (-1 when unknown).
  void Observe(int64_t target_tokens, int64_t prompt_tokens);

  // Changes the request-specific text (not shared prefixes) without changing lengths: each
  // trial gets fresh prompts, so a prefix cache warmed by trial 1 cannot flatter trial 2.
  void SetSalt(uint64_t salt) {
    salt_ = salt;
    prepared_.clear();
  }

  // Replaces the length model (fitted by the caller, e.g. on pre-run requests' usage).
  void SetModel(LengthModel m);

  // Without a counter: fits the model to the observations so far (call at the end of
  // warm-up) and restarts the length report. Returns whether the model changed.
  bool Refit();

  LengthModel model() const;
  LengthReport Report() const;
  bool exact() const { return static_cast<bool>(counter_); }  // lengths verified per prompt
  // Observations Refit() fitted on (0 when it did not refit).
  int64_t refit_samples() const;

  // `n` seeded words joined by single spaces (no leading or trailing space).
  static std::string Words(uint64_t seed, int n);

 private:
  std::string PrefixText(int32_t prefix_id, int32_t tokens);
  // Appends the text of a trace request's hash blocks (spec.block_ids), at most `words`
  // words; returns how many it appended.
  int AppendTraceBlocks(const workload::RequestSpec& spec, int words, const LengthModel& m, std::string* text) const;
  Result<std::string> Exact(std::string text, int64_t target, uint64_t seed);
  Result<std::string> BuildText(const workload::RequestSpec& spec, bool check);

  uint64_t seed_;
  uint64_t salt_ = 0;                      // dispatcher thread only
  TokenCountFn counter_;
  mutable std::mutex mu_;
  LengthModel model_;                      // guarded by mu_
  std::vector<std::pair<double, double>> obs_;  // guarded by mu_: (words, tokens)
  LengthReport report_;                    // guarded by mu_
  bool refitted_ = false;                  // guarded by mu_
  int64_t refit_samples_ = 0;              // guarded by mu_
  bool sealed_ = false;                    // dispatcher thread only: Prepare() ran
  std::unordered_map<uint64_t, std::string> prepared_;  // dispatcher thread only: by spec index
  std::unordered_map<int64_t, std::string> prefixes_;  // dispatcher thread only
  int trusted_streak_ = 0;                 // dispatcher thread only
};

}  // namespace infereng::bench
