#include "fit/deployment.h"

#include <string>

namespace infereng::fit {

Status Validate(const Deployment& d) {
  const auto& m = d.model;
  if (m.layers <= 0 || m.hidden <= 0 || m.heads <= 0 || m.kv_heads <= 0 || m.head_dim <= 0 || m.vocab <= 0) {
    return Status::InvalidArgument("model \"" + m.name + "\" has incomplete architecture figures");
  }
  if (d.accel.memory_bytes <= 0 || d.accel.bandwidth_bytes_per_s <= 0 || d.accel.flops_bf16 <= 0) {
    return Status::InvalidArgument("accelerator \"" + d.accel.name + "\" has incomplete figures");
  }
  if (d.count < 1) return Status::InvalidArgument("--count must be at least 1, got " + std::to_string(d.count));
  if (d.tp < 1) return Status::InvalidArgument("--tp must be at least 1, got " + std::to_string(d.tp));
  if (d.count % d.tp != 0) {
    return Status::InvalidArgument("--tp " + std::to_string(d.tp) + " does not divide --count " +
                                   std::to_string(d.count) + " (count = tp x pipeline stages)");
  }
  if (d.pp() > m.layers) {
    return Status::InvalidArgument(std::to_string(d.pp()) + " pipeline stages (count / tp) exceed the model's " +
                                   std::to_string(m.layers) + " layers");
  }
  if (d.ep < 1 || d.ep > d.count) {
    return Status::InvalidArgument("--ep must be between 1 and --count " + std::to_string(d.count) + ", got " +
                                   std::to_string(d.ep));
  }
  if (d.ep > 1 && !m.IsMoe()) {
    return Status::InvalidArgument("--ep " + std::to_string(d.ep) + " needs a mixture-of-experts model; \"" +
                                   m.name + "\" is dense");
  }
  if (d.ep > 1 && m.experts % d.ep != 0) {
    return Status::InvalidArgument("--ep " + std::to_string(d.ep) + " does not divide the " +
                                   std::to_string(m.experts) + " experts");
  }
  if (m.heads % d.tp != 0) {
    return Status::InvalidArgument("--tp " + std::to_string(d.tp) + " does not divide the " +
                                   std::to_string(m.heads) + " attention heads");
  }
  const auto& e = d.eff;
  if (!(e.flops > 0 && e.flops <= 1) || !(e.bandwidth > 0 && e.bandwidth <= 1) ||
      !(e.interconnect > 0 && e.interconnect <= 1)) {
    return Status::InvalidArgument("efficiency factors must be in (0, 1]");
  }
  if (!(e.step_overhead_s >= 0) || !(e.layer_overhead_s >= 0)) {
    return Status::InvalidArgument("step and layer overheads must be >= 0");
  }
  return Status::Ok();
}

}  // namespace infereng::fit
