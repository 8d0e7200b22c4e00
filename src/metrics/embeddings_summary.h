// EmbeddingsSummary: what an embeddings run adds to a summary (docs/metrics.md,
// "Embeddings"). An embeddings request (RequestRecord::items > 0) carries a batch of
// inputs and gets one vector per input in one JSON answer: it has an E2E latency and no
// TTFT, ITL or TPOT, and its throughput is counted in items and input tokens.
//
// Populations, as for the rest of the summary (metrics/summary.h): per-request figures
// (batch size, input tokens per item) over successful in-window requests; rates count
// successful requests whose answer ended (t_end) inside the window, divided by the
// summary's rate basis, exactly as requests/s does, so items/s = window_items / basis.
// Input tokens of a request: usage.prompt_tokens when the server reported it, else the
// target the client built (input_tokens_target).
//
// A rerank request (items > 0 and query_tokens > 0) is the same kind of request: its items
// are documents, each scored as one (query, document) pair, and its input tokens are the
// pairs' tokens. A run of rerank requests fills the same block with `rerank` set, and the
// printers say "documents" for items.
//
// JSON under the summary's "embeddings" key, or "rerank" for a rerank run, with the same
// fields (EmbeddingsToJson / EmbeddingsFromJson, docs/results-schema.md); absent when no
// record is an embeddings or rerank request.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "core/stats.h"
#include "core/status.h"
#include "metrics/record.h"

namespace infereng::metrics {

struct EmbeddingsSummary {
  bool rerank = false;              // items are documents of rerank requests (the JSON key)
  int64_t requests = 0;             // successful in-window embeddings (rerank) requests
  int64_t items = 0;                // their inputs
  int64_t input_tokens = 0;         // their input tokens
  int64_t window_items = 0;         // items of successful requests that ended in the window
  int64_t window_input_tokens = 0;  // input tokens of the same requests
  double items_per_s = 0;           // window_items / rate basis
  double input_tokens_per_s = 0;    // window_input_tokens / rate basis
  stats::SampleStats items_per_request;      // batch size
  stats::SampleStats input_tokens_per_item;  // a request's input tokens / its items

  friend bool operator==(const EmbeddingsSummary&, const EmbeddingsSummary&) = default;
};

// The input tokens an embeddings request is counted with (see the header comment).
int64_t EmbeddingInputTokens(const RequestRecord& r);

// "embeddings" or "rerank": the summary.json key of the block, and what its items are
// called in print ("items" or "documents").
const char* EmbeddingsKey(const EmbeddingsSummary& e);
const char* ItemsName(const EmbeddingsSummary& e);

nlohmann::json EmbeddingsToJson(const EmbeddingsSummary& e);
Result<EmbeddingsSummary> EmbeddingsFromJson(const nlohmann::json& j, const std::string& where);

}  // namespace infereng::metrics
