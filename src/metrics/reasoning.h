// Reasoning chunks of a simulated stream: the twin (twin/simulation.cc) plays a reasoning
// model by marking the first N output tokens of each record as reasoning, as the embedded
// engine streams them (serve/emitter.cc: the first N tokens as delta.reasoning_content).
// The metrics then derive TTFT visible from the record like any measured one
// (metrics/derive.h), so the twin's prediction of it is TTFT + the time to decode N tokens.
#pragma once

#include <cstdint>
#include <vector>

#include "metrics/record.h"

namespace infereng::metrics {

// Marks the chunks that carry the first `reasoning_tokens` tokens as reasoning. A chunk
// that carries both the last reasoning tokens and the first answer tokens is split in two
// at its time (reasoning first), as serve writes two events in one write. Returns the
// reasoning tokens marked (fewer than asked when the chunks carry fewer tokens).
int64_t MarkReasoning(std::vector<Chunk>& chunks, int64_t reasoning_tokens);

}  // namespace infereng::metrics
