// Router: picks the replica that serves a request (round-robin, least-outstanding or
// prefix-affinity with a load bound). Only replicas that accept traffic are eligible
// (starting and draining replicas are not).
//
// Prefix affinity: rendezvous hashing of the request's affinity key (its prefix, salted by
// tenant unless the cache is shared) over the accepting replicas, so requests sharing a
// prefix land where that prefix is cached and adding a replica moves few keys; when the
// chosen replica has more than twice the mean outstanding (+4) the request goes to the
// least-loaded one instead. Requests without a prefix use least-outstanding.
//
// Thread-safety: none (one per cluster).
#pragma once

#include <cstdint>
#include <span>

#include "twin/engine_config.h"

namespace infereng::twin {

struct ReplicaView {
  bool accepting = false;
  int64_t outstanding = 0;  // waiting + running
};

class Router {
 public:
  explicit Router(RouterPolicy policy) : policy_(policy) {}
  // Index of the chosen replica, or -1 when none accepts. affinity_key 0: no prefix.
  int Pick(std::span<const ReplicaView> replicas, uint64_t affinity_key);

 private:
  int LeastOutstanding(std::span<const ReplicaView> replicas) const;
  RouterPolicy policy_;
  uint64_t next_ = 0;
};

}  // namespace infereng::twin
