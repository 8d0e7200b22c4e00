// A run directory made by the twin (requests.jsonl, summary.json, manifest.json) for tests of
// tools that read run directories (compare, history check): examples/chat.yaml simulated for
// 40 s (5 s warm-up) with the given --set knobs and seed. Test-only (infereng_testing).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace infereng::testing {

Status SimulateRunDir(const std::string& dir, const std::vector<std::string>& sets, uint64_t seed);

}  // namespace infereng::testing
