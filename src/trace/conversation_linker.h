// ConversationLinker: conversations inferred from prefix block hashes, for traces that carry
// hash_ids but no session ids (Mooncake's conversation trace). A chat turn re-sends the whole
// conversation so far, so its prompt begins with every whole block of the turn before; a
// stranger's prompt shares at most what many prompts share (a system prompt, a document).
//
// Rule, applied to requests in trace order:
//   - a request's whole blocks are its first floor(input_tokens / block_tokens) hash_ids
//     (the last, partial block changes once the next turn appends to it); the last of them
//     is the request's "end";
//   - request R continues conversation C when the deepest of R's leading blocks that is an
//     earlier request P's end (the latest such P) belongs to C and:
//       * it is not P's first block: a product's template and system prompt fill the first
//         block of every prompt, so only what lies past it tells conversations apart;
//       * it is private: no request outside C has carried that block so far;
//       * R arrived strictly after P (a turn waits for the answer before it), and
//       * R's prompt is not shorter than P's (it re-sends P's prompt);
//   - otherwise R starts a new conversation.
//   A block becomes shared (for ever) as soon as a request of another conversation carries it.
//
// On Mooncake's conversation trace the rule links 3,937 of 12,031 requests; 90% of those are
// at least the earlier prompt plus its answer long (95% within 16 tokens of it), as a turn
// that re-sends the conversation must be, which the rule itself does not ask. On the
// 203-line short slice (a subset of the 1,000-line one) it finds exactly the 21 links the
// 1,000-line slice has between the subset's lines: without the first-block, arrival and
// length conditions, one early short prompt made the whole slice one conversation.
//
// What it cannot see: a turn whose previous turn has no whole block past the first starts a
// new conversation (turn counts are then a lower bound); two turns of one conversation with
// the same timestamp (Mooncake's are in coarse 3 s steps) split it; a shared prefix that one
// conversation alone has carried so far still looks private, so strangers sharing a long
// document can be joined while nobody else has sent it. Id reuse across distinct contents
// (a hash collision) is not detected.
//
// Memory: two hash maps, one entry per distinct block id and one per distinct end: ~70 bytes
// per distinct block as measured on Mooncake's conversation trace (182,790 blocks, +12.7 MB;
// docs/PERFORMANCE.md).
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>

namespace infereng::trace {

class ConversationLinker {
 public:
  explicit ConversationLinker(int64_t block_tokens) : block_tokens_(block_tokens > 0 ? block_tokens : 512) {}

  // The conversation (0, 1, ... in order of first request) of the next request in trace
  // order, arriving at t_s. A request without hash_ids starts a conversation of its own.
  int64_t Link(std::span<const uint64_t> hash_ids, int64_t input_tokens, double t_s);

  // Requests linked to an earlier one (follow-up turns), and conversations so far.
  int64_t follow_ups() const { return follow_ups_; }
  int64_t conversations() const { return next_; }

 private:
  struct Block {
    int64_t conversation = 0;
    bool shared = false;
  };
  int64_t block_tokens_;
  int64_t next_ = 0, follow_ups_ = 0;
  std::unordered_map<uint64_t, Block> blocks_;   // every block id seen: its first conversation
  struct End {
    int64_t conversation = 0;
    double t_s = 0;
    int64_t input_tokens = 0;
    bool first_block = false;  // the request's only whole block is its first
  };
  std::unordered_map<uint64_t, End> ends_;  // last whole block of a request -> the latest such request
};

}  // namespace infereng::trace
