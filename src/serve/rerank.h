// The embedded engine's /v1/rerank answer: deterministic relevance scores and the vLLM JSON.
//
// A score is a pure function of the pair's token ids (the same query and document always
// get the same score, whatever the other documents, the order or the server's seed): a
// hash of the query's ids and the document's, mapped into (0, 1). The numbers mean
// nothing; the shape, the count, the indices and the order (by score, highest first; equal
// scores by index) are what a client can check.
//
// Timing is the engine's, not this file's: the handler (handlers.cc) submits the pairs to
// the engine as one prefill-only request of Σ (query + document_k) tokens, exactly as an
// embeddings batch (serve/embeddings.h), so its latency grows with documents x tokens and
// it queues with chat traffic; the answer is written when that prefill ends (emitter.cc).
// docs/serve.md.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "serve/request_parser.h"
#include "serve/sse_format.h"

namespace infereng::serve {

// In (0, 1).
double RerankScore(const std::vector<uint32_t>& query, const std::vector<uint32_t>& document);

// {"id":"rerank-<seq>","model":...,"usage":{"prompt_tokens":N,"total_tokens":N},"results":[
//  {"index":i,"document":{"text":...},"relevance_score":s}, ...],"timings":{...}}: the
// top_n results by score; "document" left out with return_documents false; timings as the
// embeddings answer has them.
std::string RerankResponseJson(const RerankParams& p, std::string_view id, std::string_view model, const Timings& timings);

}  // namespace infereng::serve
