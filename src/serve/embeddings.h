// The embedded engine's /v1/embeddings answer: deterministic vectors and the OpenAI JSON.
//
// A vector is a pure function of its input's token ids (the same text always gets the same
// vector, whatever the batch or the server's seed): kEmbeddingDimension components drawn
// from a hash of the ids, then L2-normalised; `dimensions` < kEmbeddingDimension cuts it
// and normalises again (as OpenAI's text-embedding-3 does). The numbers mean nothing; the
// shape, the count and the norm are what a client can check.
//
// Timing is the engine's, not this file's: the handler (handlers.cc) submits the batch to
// the engine as one prefill-only request (the summed tokens, one step's output that nobody
// sees), so its latency grows with batch x tokens and it queues with chat traffic; the
// answer is written when that prefill ends (emitter.cc). docs/serve.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "serve/request_parser.h"
#include "serve/sse_format.h"

namespace infereng::serve {

// `dimensions` components, L2 norm 1.
std::vector<float> EmbeddingVector(const std::vector<uint32_t>& ids, int32_t dimensions);

// {"object":"list","data":[{"object":"embedding","index":i,"embedding":[...]}...],"model":...,
//  "usage":{"prompt_tokens":N,"total_tokens":N},"timings":{...}} (timings as the completions'
// non-streamed answer has them: queue_ms, prompt_ms, prompt_n, cache_n).
std::string EmbeddingsResponseJson(const EmbeddingsParams& p, std::string_view model, const Timings& timings);

}  // namespace infereng::serve
