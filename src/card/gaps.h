// Gaps: a card's workload assumptions and missing measurements. Every workload fact a
// card is expected to state (product contract, traffic shape, objectives, constraints,
// baseline, quality) that is absent or marked `assumed`, each with why it matters.
// `card check` prints them.
#pragma once

#include <string>
#include <vector>

#include "card/card.h"

namespace infereng::card {

struct Gap {
  enum class Kind { kMissing, kAssumed };
  Kind kind = Kind::kMissing;
  std::string path;  // dotted field path, e.g. "traffic.arrival.rate"
  int line = 0;      // for assumed fields: where the assumption is written
  std::string why;   // one line: why the number matters and how to get it
};

// In schema order: assumed fields first where they are written, then missing ones.
std::vector<Gap> FindGaps(const WorkloadCard& card);

}  // namespace infereng::card
