#include "twin/router.h"

#include "core/mix64.h"

namespace infereng::twin {
int Router::LeastOutstanding(std::span<const ReplicaView> replicas) const {
  int best = -1;
  for (size_t i = 0; i < replicas.size(); ++i) {
    if (!replicas[i].accepting) continue;
    if (best < 0 || replicas[i].outstanding < replicas[static_cast<size_t>(best)].outstanding) {
      best = static_cast<int>(i);
    }
  }
  return best;
}

int Router::Pick(std::span<const ReplicaView> replicas, uint64_t affinity_key) {
  switch (policy_) {
    case RouterPolicy::kRoundRobin: {
      for (size_t k = 0; k < replicas.size(); ++k) {
        const size_t i = (next_ + k) % replicas.size();
        if (replicas[i].accepting) {
          next_ = i + 1;
          return static_cast<int>(i);
        }
      }
      return -1;
    }
    case RouterPolicy::kLeastOutstanding:
      return LeastOutstanding(replicas);
    case RouterPolicy::kPrefixAffinity: {
      if (affinity_key == 0) return LeastOutstanding(replicas);
      int best = -1;
      uint64_t best_score = 0;
      int64_t total = 0, n = 0;
      for (size_t i = 0; i < replicas.size(); ++i) {
        if (!replicas[i].accepting) continue;
        total += replicas[i].outstanding;
        ++n;
        const uint64_t score = Mix64(affinity_key ^ Mix64(i + 1));
        if (best < 0 || score > best_score) {
          best = static_cast<int>(i);
          best_score = score;
        }
      }
      if (best < 0) return -1;
      const int64_t bound = 2 * total / n + 4;
      if (replicas[static_cast<size_t>(best)].outstanding > bound) return LeastOutstanding(replicas);
      return best;
    }
  }
  return -1;
}

}  // namespace infereng::twin
