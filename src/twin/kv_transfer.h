// KvTransfers: the prompt KV moving from a prefill replica to a decode replica in a
// disaggregated cluster (ClusterConfig::prefill_replicas), in the twin's virtual time.
//
// The model: each prefill replica has one outgoing link of `bytes_per_s` (its NICs
// together). A transfer of T prompt tokens holds the link for T x bytes_per_token /
// bytes_per_s and arrives `latency` after it leaves the link (handshake, completion
// notice: it does not hold the link). A replica's transfers take the link in turn (FIFO
// from when each prefill finished), so a burst of long prompts queues at the sender. The receiving side
// is not a bottleneck here (a decode replica's link is as fast and carries one direction).
// What it leaves out, on purpose: the prefill replica keeps its blocks until its step ends
// only (real engines hold them until the decode side has pulled them), and a transfer
// always moves the whole prompt (vLLM's decode instance skips blocks it has cached).
//
// Thread-safety: none (one driver).
#pragma once

#include <cstdint>
#include <limits>
#include <queue>
#include <utility>
#include <vector>

#include "core/clock.h"
#include "core/histogram.h"

namespace infereng::twin {

struct KvLink {
  double bytes_per_token = 0;  // KV of one token, whole model (all layers, all ranks)
  double bytes_per_s = 0;      // one sending replica's link
  Nanos latency = 0;           // per transfer
};

class KvTransfers {
 public:
  static constexpr Nanos kNever = std::numeric_limits<Nanos>::max();

  // `links`: one per prefill replica (indexes 0..links-1 as the caller numbers them).
  KvTransfers(int links, KvLink link);

  // Sends the KV of `tokens` prompt tokens from `link` once it is ready at `ready`; the
  // transfer of `slot` falls due at the returned time (when the decode side has it).
  Nanos Start(int link, Nanos ready, int64_t tokens, int32_t slot);
  // When the next transfer arrives; kNever when none is in flight.
  Nanos NextDue() const { return due_.empty() ? kNever : due_.top().first; }
  // Calls f(due, slot) for every transfer due at or before `t`, in due order.
  template <typename F>
  void PopDue(Nanos t, F&& f) {
    while (!due_.empty() && due_.top().first <= t) {
      const auto [due, slot] = due_.top();
      due_.pop();
      f(due, slot);
    }
  }
  size_t in_flight() const { return due_.size(); }

  // Facts of the transfers started so far.
  int64_t transfers() const { return transfers_; }
  double bytes() const { return bytes_; }
  const LogHistogram& transfer_ms() const { return transfer_ms_; }  // leaves the queue -> arrives
  const LogHistogram& wait_ms() const { return wait_ms_; }          // ready -> on the link (link busy)

 private:
  KvLink link_;
  std::vector<Nanos> link_free_;
  using Due = std::pair<Nanos, int32_t>;
  std::priority_queue<Due, std::vector<Due>, std::greater<>> due_;
  int64_t transfers_ = 0;
  double bytes_ = 0;
  LogHistogram transfer_ms_, wait_ms_;
};

}  // namespace infereng::twin
