// RooflineCostModel: the twin's CostModel backed by fit/'s roofline (RooflineStepCost):
// weights, FLOPs and bytes per step, TP all-reduce, MoE expert traffic and precision all
// come from there, so `fit` and `simulate` agree by construction.
//
// Thread-safety: immutable; StepSeconds is const and allocation-free.
#pragma once

#include "fit/step_cost.h"
#include "twin/cost_model.h"

namespace infereng::twin {

class RooflineCostModel final : public CostModel {
 public:
  explicit RooflineCostModel(const fit::Deployment& d) : cost_(d) {}
  double StepSeconds(const StepShape& s) const override;
  const fit::RooflineStepCost& roofline() const { return cost_; }

 private:
  fit::RooflineStepCost cost_;
};

}  // namespace infereng::twin
