// The JSON form of a Characterization (`characterize --json`, DIR/characterize.json).
// Undefined figures (a window longer than the trace, no hash_ids) are null, never 0.
#pragma once

#include <nlohmann/json.hpp>

#include "trace/characterization.h"

namespace infereng::trace {

nlohmann::json ToJson(const Characterization& c);

}  // namespace infereng::trace
