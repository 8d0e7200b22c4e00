// ConversationLinker (see conversation_linker.h for the rule and what it cannot see).
#include "trace/conversation_linker.h"

#include <algorithm>

namespace infereng::trace {

int64_t ConversationLinker::Link(std::span<const uint64_t> hash_ids, int64_t input_tokens, double t_s) {
  if (hash_ids.empty()) return next_++;
  // The deepest leading block that is an earlier request's end decides.
  int64_t conversation = -1;
  for (size_t k = hash_ids.size(); k-- > 0;) {
    const auto end = ends_.find(hash_ids[k]);
    if (end == ends_.end()) continue;
    const End& e = end->second;
    const auto block = blocks_.find(hash_ids[k]);
    const bool private_block = block != blocks_.end() && !block->second.shared && block->second.conversation == e.conversation;
    if (!e.first_block && private_block && t_s > e.t_s && input_tokens >= e.input_tokens) conversation = e.conversation;
    break;
  }
  if (conversation < 0) {
    conversation = next_++;
  } else {
    ++follow_ups_;
  }
  for (const uint64_t id : hash_ids) {
    const auto [it, fresh] = blocks_.try_emplace(id, Block{conversation, false});
    if (!fresh && it->second.conversation != conversation) it->second.shared = true;
  }
  const auto whole = static_cast<size_t>(std::min<int64_t>(static_cast<int64_t>(hash_ids.size()),
                                                           std::max<int64_t>(input_tokens, 0) / block_tokens_));
  if (whole > 0) ends_[hash_ids[whole - 1]] = End{conversation, t_s, input_tokens, whole == 1};
  return conversation;
}

}  // namespace infereng::trace
