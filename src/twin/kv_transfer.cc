// KvTransfers: per-link FIFO pricing of KV transfers (see kv_transfer.h).
#include "twin/kv_transfer.h"

#include <algorithm>
#include <cmath>

namespace infereng::twin {

KvTransfers::KvTransfers(int links, KvLink link)
    : link_(link), link_free_(static_cast<size_t>(std::max(0, links)), 0) {}

Nanos KvTransfers::Start(int link, Nanos ready, int64_t tokens, int32_t slot) {
  Nanos& free_at = link_free_[static_cast<size_t>(link)];
  const Nanos start = std::max(ready, free_at);
  const double bytes = static_cast<double>(std::max<int64_t>(0, tokens)) * link_.bytes_per_token;
  const double seconds = bytes / link_.bytes_per_s;
  // Saturating: an absurd link (1 kB/s, set by hand) must not overflow the clock; a transfer
  // that would end past ~290 years ends there, and so does every one queued behind it.
  constexpr Nanos kFar = kNever / 4;
  const Nanos on_link = static_cast<Nanos>(std::min(seconds * 1e9, static_cast<double>(kFar)));
  free_at = std::min(kFar, start + on_link);  // the latency does not hold the link: the next one may start
  const Nanos due = std::min(kFar, free_at + link_.latency);
  due_.emplace(due, slot);
  ++transfers_;
  bytes_ += bytes;
  transfer_ms_.Add(NanosToMillis(due - start));
  wait_ms_.Add(NanosToMillis(start - ready));
  return due;
}

}  // namespace infereng::twin
