// One pass of the virtual-time driver (simulation.cc), internal to twin/: RunSimulation
// (simulation_burst.cc) calls it once, or twice for a count-limited run.
#pragma once

#include "card/card.h"
#include "core/status.h"
#include "twin/setup.h"
#include "twin/simulation.h"

namespace infereng::twin {

Result<SimulationResult> RunSimulationPass(const card::WorkloadCard& card, const TwinSetup& setup,
                                           const SimulationOptions& options);

}  // namespace infereng::twin
