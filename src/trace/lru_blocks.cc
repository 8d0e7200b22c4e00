// LRU block cache for prefix hit rates.
#include "trace/lru_blocks.h"

namespace infereng::trace {

int64_t LruBlocks::Access(std::span<const uint64_t> ids) {
  int64_t hits = 0;
  while (hits < static_cast<int64_t>(ids.size()) && where_.count(ids[static_cast<std::size_t>(hits)]) != 0) ++hits;
  // Touch the last block first, so a prefix's head ends most recent and is evicted after
  // its tails (an engine frees the deepest blocks of a chain first; evicting the head first
  // would orphan every block behind it).
  for (auto i = ids.size(); i-- > 0;) {
    auto it = where_.find(ids[i]);
    if (it != where_.end()) {
      order_.splice(order_.begin(), order_, it->second);
    } else {
      order_.push_front(ids[i]);
      where_[ids[i]] = order_.begin();
    }
  }
  while (static_cast<int64_t>(order_.size()) > capacity_ && !order_.empty()) {
    where_.erase(order_.back());
    order_.pop_back();
  }
  return hits;
}

}  // namespace infereng::trace
