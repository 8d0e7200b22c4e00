#include "twin/quality_model.h"

namespace infereng::twin {

double PrecisionAccuracyFactor(std::string_view precision) {
  struct Row {
    std::string_view precision;
    double factor;
  };
  // Illustrative (quality_model.h): the order is published, the figures are not ours.
  static constexpr Row kRows[] = {{"fp8", 0.99}, {"int8", 0.98}, {"int4", 0.95}, {"fp4", 0.93}};
  for (const Row& r : kRows) {
    if (r.precision == precision) return r.factor;
  }
  return 1.0;
}

}  // namespace infereng::twin
