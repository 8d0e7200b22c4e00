// The embedded engine's answers to eval-set prompts (`serve --eval-set FILE
// --quality-accuracy P`, and `run` on the card's quality.eval_set), so quality pairing is
// demonstrable end to end without a GPU: a request whose prompt is an eval item's prompt is
// answered with the item's reference answer with probability P, otherwise with a wrong
// answer (one that fails the item's check); any other prompt gets the usual filler text.
//
// Matching: on the prompt's token ids (text_model.h rule: words, a chat prompt being its
// messages' text contents in order), so the same prompt matches whether it came as
// completions text or as chat messages. The draw is deterministic: a hash of the server's
// seed, the prompt and how many times this server has seen that prompt before, so a run
// repeats exactly and an item asked twice is drawn twice. The answer's words are its
// output tokens (finish_reason "stop"; cut at max_tokens: "length"); stop strings and
// min_tokens do not apply to it.
//
// Thread safety: built before the server starts, then read-only (the occurrence counts
// live in the server, on its one thread).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace infereng::serve {

struct EvalAnswer {
  std::string right;  // passes the item's check
  std::string wrong;  // fails it (where the check can fail at all)
};

class EvalAnswers {
 public:
  // `prompt_ids`: the item's prompt tokenised by the server's rule (TokenizeAppend).
  void Add(const std::vector<uint32_t>& prompt_ids, EvalAnswer answer);
  // The answers for a request's prompt, or null; `*key` gets the prompt's hash.
  const EvalAnswer* Find(const std::vector<uint32_t>& prompt_ids, uint64_t* key) const;
  std::size_t size() const { return by_prompt_.size(); }

 private:
  std::unordered_map<uint64_t, EvalAnswer> by_prompt_;
};

// Whether the `occurrence`-th (0-based) request for prompt `key` is answered right:
// a uniform draw from (seed, key, occurrence) below `accuracy`.
bool AnswerRight(uint64_t seed, uint64_t key, uint64_t occurrence, double accuracy);

// The answer's output tokens: its words, each after the first with a leading space (the
// text model's token shape), so the streamed text is the words joined by single spaces.
std::vector<std::string> AnswerTokens(std::string_view answer);

}  // namespace infereng::serve
