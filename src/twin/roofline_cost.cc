#include "twin/roofline_cost.h"

namespace infereng::twin {

double RooflineCostModel::StepSeconds(const StepShape& s) const { return cost_.Seconds(s); }

}  // namespace infereng::twin
