// The server's stand-in for a tokenizer and a language model: documented, deterministic.
//
// Prompt tokens: one token per whitespace-separated word (a maximal run of bytes that are
// not ASCII space, tab, CR or LF). A chat prompt is the concatenation of the messages'
// text contents; roles and template markup add no tokens. This rule is what POST /tokenize
// reports, so a client can build a prompt of exactly N tokens ("w w w ...").
// Token ids: a 64-bit hash of the word, folded into [0, kVocabSize).
// Prefix identity: a chained hash per full block of token ids (EngineRequest::block_hashes),
// so two prompts sharing a leading run of words (a system prompt) share cache blocks.
// Output: token i of a request is a pseudo-word chosen by hash(seed, i) from a fixed
// vocabulary of lowercase words; every token but the first starts with a space. The text
// never needs JSON escaping.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/mix64.h"  // Mix64, used by the serve files for seeded draws

namespace infereng::serve {

inline constexpr uint32_t kVocabSize = 32000;

// Appends the token ids of `text` to `ids`.
void TokenizeAppend(std::string_view text, std::vector<uint32_t>& ids);
int64_t CountTokens(std::string_view text);

// Chained block hashes over the leading full blocks of `ids`.
std::vector<uint64_t> BlockHashes(const std::vector<uint32_t>& ids, int32_t block_tokens);

// The text of output token `index` (0-based) of a request with text seed `seed`.
// Points into static storage: no allocation.
std::string_view OutputTokenText(uint64_t seed, int32_t index);

// How many tokens the request produces given a stop list: scans the output text and
// returns the 1-based index of the token that completes the first match of any stop
// string (text is cut before the match), or `max_tokens` when none matches.
// `*cut_len` gets the number of bytes of that last token's text to send (may be 0).
struct StopScan {
  int32_t tokens = 0;        // tokens generated (counted in usage)
  bool stopped = false;      // a stop string matched
  int32_t last_token_bytes = -1;  // bytes of the last token's text to emit; -1 = all
  int32_t which = -1;        // index of the matching stop string
};
StopScan ScanForStop(uint64_t seed, int32_t max_tokens, const std::vector<std::string>& stop);

}  // namespace infereng::serve
