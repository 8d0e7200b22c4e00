#include "twin/cost_caveats.h"

namespace infereng::twin {
namespace {

// Accelerators whose efficiencies (eff_flops, eff_bandwidth, the overheads) were fitted or
// held out on published results: FIDELITY.md (a), (d), (d3).
bool EfficienciesChecked(const std::string& accel) {
  return accel == "h100-sxm" || accel == "h200" || accel == "a100-80gb";
}

}  // namespace

std::vector<std::string> CostCaveats(const fit::Deployment& d, const CostKnobs& set) {
  std::vector<std::string> out;
  const std::string& accel = d.accel.name;
  const bool checked = EfficienciesChecked(accel);
  const bool efficiencies_set = set.eff_flops > 0 && set.eff_bandwidth > 0;
  // Tensor parallelism priced by the default collective model (no collective key set).
  const bool default_collectives = d.tp > 1 && set.collective_launch_s < 0 && !(set.eff_interconnect > 0);

  if (!checked && !efficiencies_set) {
    out.push_back("the roofline's efficiencies (cost.eff_flops, cost.eff_bandwidth and the overheads) were fitted "
                  "and checked on H100, H200 and A100 only (docs/FIDELITY.md); on " +
                  accel + " they are unchecked" +
                  (default_collectives ? ", and so are its tensor-parallel collectives" : "") +
                  ": measure the engine with `infereng profile` and pass --profile, or fit them with "
                  "`infereng calibrate`");
  } else if (!checked && default_collectives) {
    out.push_back("tensor parallelism on " + accel +
                  ": the collective prices are unchecked against measurements; set cost.collective_launch and "
                  "cost.eff_interconnect from your nccl-tests, or calibrate");
  }
  // H100 and H200 (the same NVLink4) agree with measured all-reduces ((d6), and the
  // TensorRT-LLM table's TP2-TP8 rows); A100 does not.
  if (default_collectives && accel == "a100-80gb") {
    out.push_back("tensor parallelism on a100-80gb: NCCL all-reduces measured on a DGX A100 take 1.4-2.2x the "
                  "twin's price of them at every size (docs/FIDELITY.md (d6)), so TP steps here are priced "
                  "fast; set cost.collective_launch and cost.eff_interconnect from your nccl-tests (about 50us "
                  "and 0.55 there), or calibrate");
  }
  return out;
}

}  // namespace infereng::twin
