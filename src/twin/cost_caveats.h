// Cost caveats: where the roofline's catalog defaults have been checked against measurements
// and found off, or not checked at all, for one deployment. Said beside every prediction that
// prices steps with them (simulate, capacity, a run's predicted/), so nobody trusts a
// figure further than the checks behind it went. A measured profile (`--profile`) replaces
// the roofline and with it these caveats.
//
// What was checked, and where (docs/FIDELITY.md): the efficiencies were fitted on NVIDIA's
// TensorRT-LLM H100/H200 table and held out on NIM (H100 TP2) and vLLM/SGLang rows (A100 TP1,
// H100 TP4); the collective model against NCCL all-reduces measured on DGX H100 and DGX A100
// nodes ((d6): H100 within ~6% at TP4/TP8, A100 1.4-2.2x slower than priced). Nothing was
// checked on the other accelerators of the catalog.
#pragma once

#include <string>
#include <vector>

#include "fit/deployment.h"
#include "twin/engine_config.h"

namespace infereng::twin {

// One sentence per caveat, each naming what is off or unchecked, the evidence, and the
// setting or command that replaces the default. Empty when the deployment lies where the
// defaults were checked, or the user set the keys concerned (`--set cost.*`).
std::vector<std::string> CostCaveats(const fit::Deployment& d, const CostKnobs& set);

}  // namespace infereng::twin
