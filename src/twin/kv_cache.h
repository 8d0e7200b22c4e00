// KvBlockPool: the paged KV cache of one replica, with vLLM-style automatic prefix
// caching. Blocks are either free, held privately by one request, or cached: indexed by
// the chained hash of the tokens they hold, reference-counted by the requests using
// them, and (when no request uses them) kept on an LRU list, evicted only when a
// request needs a block and no free one is left. Unreferenced cached blocks count as
// free for usage (as vLLM's kv_cache_usage_perc does).
//
// Tenant isolation is in the hashes (the caller salts them per tenant), so the pool never
// needs to know tenants.
//
// Invariant: free + private + cached == total; evictable <= cached.
// Thread-safety: none (owned by one Engine).
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

namespace infereng::twin {

class KvBlockPool {
 public:
  explicit KvBlockPool(int64_t total_blocks);

  int64_t total() const { return total_; }
  int64_t free() const { return free_; }
  int64_t private_used() const { return private_; }
  int64_t cached() const { return static_cast<int64_t>(cached_count_); }
  int64_t evictable() const { return evictable_; }
  // Blocks a request could get now (free + evictable cached).
  int64_t Available() const { return free_ + evictable_; }
  // Blocks referenced by live requests.
  int64_t Used() const { return private_ + cached() - evictable_; }
  double Usage() const { return total_ ? static_cast<double>(Used()) / total_ : 0; }

  // Takes n private blocks, evicting LRU cached blocks if needed. False (and no change)
  // when fewer than n are available.
  bool Allocate(int64_t n);
  void ReleasePrivate(int64_t n);

  // Longest run of leading `hashes` (at most max_blocks) present in the cache: references
  // each matched block (taking it off the LRU list) and appends its slot to `slots`.
  // Returns the number matched.
  int32_t Match(std::span<const uint64_t> hashes, int32_t max_blocks, std::vector<int32_t>& slots);
  // Turns one of the caller's private blocks into a cached block for `hash`, referenced
  // once. Returns its slot, or -1 when the hash is already cached (the block stays private).
  int32_t Register(uint64_t hash);
  // Drops one reference; at zero the block becomes evictable (most recently used).
  void Unref(int32_t slot);

 private:
  struct Entry {
    uint64_t hash = 0;
    int32_t refs = 0;
    int32_t prev = -1, next = -1;  // LRU links while refs == 0
  };
  void LruRemove(int32_t slot);
  void LruPushBack(int32_t slot);
  void EvictOne();

  int64_t total_;
  int64_t free_;
  int64_t private_ = 0;
  int64_t evictable_ = 0;
  size_t cached_count_ = 0;
  std::vector<Entry> entries_;
  std::vector<int32_t> free_entries_;
  std::unordered_map<uint64_t, int32_t> index_;
  int32_t lru_head_ = -1, lru_tail_ = -1;  // head: least recently used
};

}  // namespace infereng::twin
