// The answer of POST /v1/rerank (vLLM, Jina, Cohere; llama.cpp's llama-server; TEI's
// /rerank): what a benchmark needs from it, and the handler that turns it into a request
// record's facts.
//
// Shapes accepted:
//   vLLM / Jina: {"id","model","usage":{"total_tokens":N},"results":[{"index":i,
//                 "document":{"text":...},"relevance_score":s}, ...]} (sorted by score, top_n)
//   llama.cpp:   {"model","object":"list","usage":{"prompt_tokens":N,"total_tokens":N},
//                 "results":[{"index":i,"relevance_score":s}, ...]} (every document, in order)
//   TEI:         [{"index":i,"score":s}, ...] (a bare array, no usage)
// A top-level "error" object is an error whatever the HTTP status. Every result needs an
// integer index below the number of documents sent, each index at most once, and a finite
// number as its score (relevance_score, or score); anything else is a protocol error naming
// the field ("results[2].index: 7 is not a new index below 5"). Order is not checked:
// llama.cpp b4748 answers in document order, vLLM by score.
//
// RerankHandler wraps the RecordingHandler of a non-SSE request (StreamRequest::sse =
// false): when the answer has fully arrived it checks it against the request (the count
// of results must be min(top_n, documents), else ErrorClass::kMismatch) and passes the
// usage on (prompt_tokens, else total_tokens), so the record gets t_end, prompt_tokens and
// its error class.
//
// Thread-safety: ParseRerankResponse is pure; a handler belongs to one request on the io
// thread. fuzz/rerank_response_fuzzer.cc drives the parser.
#pragma once

#include <cstdint>
#include <string_view>

#include "client/http_client.h"
#include "client/json_answer.h"
#include "core/status.h"

namespace infereng::client {

struct RerankResponse {
  int64_t results = 0;         // entries of `results` (or of the bare array)
  int64_t prompt_tokens = -1;  // usage.prompt_tokens, else usage.total_tokens; -1: not reported
  bool sorted = true;          // scores non-increasing in the order given
};

// `documents`: how many were sent (every index must be below it). ProtocolError naming the
// field for a malformed answer; an "error" object gives "error object in the rerank answer:
// TYPE: MESSAGE".
Result<RerankResponse> ParseRerankResponse(std::string_view body, int64_t documents);

class RerankHandler final : public JsonAnswerHandler {
 public:
  // `inner` gets every callback; `documents` were sent; `expected_results` is
  // min(top_n, documents) (the documents when no top_n was sent).
  RerankHandler(RecordingHandler* inner, int32_t documents, int32_t expected_results)
      : JsonAnswerHandler(inner), documents_(documents), expected_(expected_results) {}

 private:
  Verdict Check(std::string_view body) const override;
  int32_t documents_;
  int32_t expected_;
};

}  // namespace infereng::client
