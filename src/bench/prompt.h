// PromptBuilder: synthetic prompt text of an exact target token length, with shared
// prefixes (same prefix id -> the same leading text, byte for byte).
//
// Text is a seeded sequence of common English words ("the time people water ..."), each a
// single token with a leading space in the usual BPE vocabularies and exactly one token
// under the embedded engine's whitespace rule. Words needed for T tokens come from a linear
// model tokens = a * words + b:
//   - measured with the server's /tokenize when it has one (TokenizeCounter, engine_probe.h);
//     prompts are then checked against /tokenize and trimmed/extended until exact;
//   - otherwise assumed a = 1, b = 0 and re-fitted from usage.prompt_tokens of finished
//     requests (Observe), so warm-up calibrates the measured phase. The achieved length
//     distribution is always reported (LengthReport), never assumed.
//
// Thread-safety: Build() from the dispatcher thread and Observe() from completion threads
// may run concurrently (the model is behind a mutex; the counter is only used in Build).
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

  // The prompt for one request: prefix text (prefix_tokens of it, shared by prefix_id) +
  // a request-specific body, input_tokens in total.
  Result<std::string> Build(const workload::RequestSpec& spec);

  // A finished request's target and server-reported prompt length (-1 when unknown).
  void Observe(int64_t target_tokens, int64_t prompt_tokens);

  // Changes the request-specific text (not shared prefixes) without changing lengths: each
  // trial gets fresh prompts, so a prefix cache warmed by trial 1 cannot flatter trial 2.
  void SetSalt(uint64_t salt) { salt_ = salt; }

  // Without a counter: fits the model to the observations so far (call at the end of
  // warm-up) and restarts the length report. Returns whether the model changed.
  bool Refit();

  LengthModel model() const;
  LengthReport Report() const;
  bool exact() const { return static_cast<bool>(counter_); }  // lengths verified per prompt

  // `n` seeded words joined by single spaces (no leading or trailing space).
  static std::string Words(uint64_t seed, int n);

 private:
  std::string PrefixText(int32_t prefix_id, int32_t tokens);
  Result<std::string> Exact(std::string text, int64_t target, uint64_t seed);

  uint64_t seed_;
  uint64_t salt_ = 0;                      // dispatcher thread only
  TokenCountFn counter_;
  mutable std::mutex mu_;
  LengthModel model_;                      // guarded by mu_
  std::vector<std::pair<double, double>> obs_;  // guarded by mu_: (words, tokens)
  LengthReport report_;                    // guarded by mu_
  bool refitted_ = false;                  // guarded by mu_
  std::unordered_map<int64_t, std::string> prefixes_;  // dispatcher thread only
  int trusted_streak_ = 0;                 // dispatcher thread only
};

}  // namespace infereng::bench
