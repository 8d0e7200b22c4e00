// Autoscaler: decides how many replicas the simulated cluster should run, from one
// target metric per replica (queue depth, KV utilisation or requests in flight), like a
// Kubernetes HPA/KEDA loop: desired = ceil(sum(metric) / target), clamped to
// [min_replicas, max_replicas]. Scale-up starts replicas at once (they serve after
// cold_start); scale-down waits for `cooldown` since the last change and drains the
// least-loaded replicas. With min_replicas = 0 an idle cluster scales to zero and the
// first request triggers a cold start (it waits at the router meanwhile).
//
// Thread-safety: none.
#pragma once

#include <cstdint>

#include "core/clock.h"
#include "twin/engine_config.h"

namespace infereng::twin {

struct ScaleDecision {
  int32_t start = 0;  // replicas to start now
  int32_t drain = 0;  // replicas to drain now
};

class Autoscaler {
 public:
  explicit Autoscaler(const ClusterConfig& config) : cfg_(config) {}
  // `metric_sum`: the metric summed over serving replicas (+ router queue for queue depth
  // and in-flight); `serving` replicas accept traffic, `starting` are cold-starting.
  ScaleDecision Decide(Nanos now, double metric_sum, int32_t serving, int32_t starting);
  // A request found no serving replica and none is starting: start one now.
  ScaleDecision OnColdRequest(Nanos now, int32_t serving, int32_t starting);

 private:
  ClusterConfig cfg_;
  Nanos last_change_ = -1;
};

}  // namespace infereng::twin
