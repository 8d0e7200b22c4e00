#include "fit/collective.h"

#include <cmath>

namespace infereng::fit {

double AllReduceHops(int ranks) {
  if (ranks <= 1) return 0;
  if (ranks <= kRingMaxRanks) return 2.0 * (ranks - 1);
  return 2.0 * std::ceil(std::log2(static_cast<double>(ranks)));
}

double AllReduceLatencySeconds(int ranks, double launch_s, double per_hop_s) {
  if (ranks <= 1) return 0;
  return launch_s + AllReduceHops(ranks) * per_hop_s;
}

}  // namespace infereng::fit
