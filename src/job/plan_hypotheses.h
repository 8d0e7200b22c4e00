// Bottleneck hypotheses from the twin's prediction of a card, for `plan` without a measured
// run (with --run, `plan` takes diagnose's, job/diagnose.h). The same Hypothesis type as
// diagnose, so the plan prints both alike; every figure names "twin" as its source, and
// the confidence is never "high": a prediction is not a measurement. When the twin shows no
// bottleneck at the card's load, one "headroom" entry says so with its figures.
#pragma once

#include <vector>

#include "card/card.h"
#include "job/diagnose_evidence.h"
#include "twin/simulation.h"

namespace infereng::job {

// Ranked, best first; never empty.
std::vector<Hypothesis> TwinHypotheses(const card::WorkloadCard& card, const twin::SimulationResult& baseline);

}  // namespace infereng::job
