#include "twin/kv_cache.h"

#include <cassert>

namespace infereng::twin {

KvBlockPool::KvBlockPool(int64_t total_blocks) : total_(total_blocks), free_(total_blocks) {}

bool KvBlockPool::Allocate(int64_t n) {
  if (n <= 0) return true;
  if (free_ + evictable_ < n) return false;
  while (free_ < n) EvictOne();
  free_ -= n;
  private_ += n;
  return true;
}

void KvBlockPool::ReleasePrivate(int64_t n) {
  assert(n <= private_);
  private_ -= n;
  free_ += n;
}

int32_t KvBlockPool::Match(std::span<const uint64_t> hashes, int32_t max_blocks,
                           std::vector<int32_t>& slots) {
  int32_t matched = 0;
  for (uint64_t h : hashes) {
    if (matched >= max_blocks) break;
    auto it = index_.find(h);
    if (it == index_.end()) break;
    Entry& e = entries_[static_cast<size_t>(it->second)];
    if (e.refs == 0) {
      LruRemove(it->second);
      --evictable_;
    }
    ++e.refs;
    slots.push_back(it->second);
    ++matched;
  }
  return matched;
}

int32_t KvBlockPool::Register(uint64_t hash) {
  auto [it, inserted] = index_.try_emplace(hash, -1);
  if (!inserted) return -1;
  int32_t slot;
  if (!free_entries_.empty()) {
    slot = free_entries_.back();
    free_entries_.pop_back();
  } else {
    slot = static_cast<int32_t>(entries_.size());
    entries_.emplace_back();
  }
  it->second = slot;
  entries_[static_cast<size_t>(slot)] = Entry{hash, 1, -1, -1};
  --private_;
  ++cached_count_;
  return slot;
}

void KvBlockPool::Unref(int32_t slot) {
  Entry& e = entries_[static_cast<size_t>(slot)];
  assert(e.refs > 0);
  if (--e.refs == 0) {
    LruPushBack(slot);
    ++evictable_;
  }
}

void KvBlockPool::EvictOne() {
  const int32_t slot = lru_head_;
  assert(slot >= 0);
  LruRemove(slot);
  index_.erase(entries_[static_cast<size_t>(slot)].hash);
  free_entries_.push_back(slot);
  --evictable_;
  --cached_count_;
  ++free_;
}

void KvBlockPool::LruRemove(int32_t slot) {
  Entry& e = entries_[static_cast<size_t>(slot)];
  if (e.prev >= 0) entries_[static_cast<size_t>(e.prev)].next = e.next;
  else lru_head_ = e.next;
  if (e.next >= 0) entries_[static_cast<size_t>(e.next)].prev = e.prev;
  else lru_tail_ = e.prev;
  e.prev = e.next = -1;
}

void KvBlockPool::LruPushBack(int32_t slot) {
  Entry& e = entries_[static_cast<size_t>(slot)];
  e.prev = lru_tail_;
  e.next = -1;
  if (lru_tail_ >= 0) entries_[static_cast<size_t>(lru_tail_)].next = slot;
  else lru_head_ = slot;
  lru_tail_ = slot;
}

}  // namespace infereng::twin
