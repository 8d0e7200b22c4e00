// RooflineCostModel: the twin's CostModel backed by fit/'s roofline (RooflineStepCost):
// weights, FLOPs and bytes per step, TP all-reduce, MoE expert traffic and precision all
// come from there, so `fit` and `simulate` agree by construction.
//
// A step that reports kv_occupied_tokens (llama.cpp's slot engine) attends over every
// occupied cell, not only its own context (roofline_cost.cc; docs/modeling.md).
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
