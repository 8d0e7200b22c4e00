// LruBlocks: a prefix cache of a fixed number of KV blocks with least-recently-used
// eviction, as an engine's paged prefix cache behaves, for the "hit rate at cache size N"
// figure. A request looks up its blocks in order and hits while its leading blocks are
// cached (a block is reusable only with everything before it); then all its blocks are
// touched (inserted or made most recent; the head last, so tails are evicted before their
// head), least recent evicted beyond the capacity.
#pragma once

#include <cstdint>
#include <list>
#include <span>
#include <unordered_map>

namespace infereng::trace {

class LruBlocks {
 public:
  explicit LruBlocks(int64_t capacity) : capacity_(capacity) {}
  // Returns how many leading blocks of `ids` were cached, then touches all of them.
  int64_t Access(std::span<const uint64_t> ids);
  int64_t capacity() const { return capacity_; }

 private:
  int64_t capacity_;
  std::list<uint64_t> order_;  // most recent first
  std::unordered_map<uint64_t, std::list<uint64_t>::iterator> where_;
};

}  // namespace infereng::trace
