// The answer of POST /v1/embeddings (OpenAI, vLLM, llama.cpp's llama-server): what a
// benchmark needs from it, and the handler that turns it into a request record's facts.
//
// Shape: {"object":"list","data":[{"object":"embedding","index":i,"embedding":[floats]
// (or a base64 string with encoding_format=base64)}, ...],"model":...,"usage":
// {"prompt_tokens":N,"total_tokens":N}}. A top-level "error" object is an error whatever
// the HTTP status. Anything else that is not this shape is a protocol error naming the
// field ("data[3].embedding: expected an array of numbers or a base64 string"). The vectors
// may come in any order (llama.cpp answers in completion order): each `index`, when given,
// must be distinct and below the count; vectors must all have the same dimension.
//
// EmbeddingsHandler wraps the RecordingHandler of a non-SSE request (StreamRequest::sse =
// false): when the answer has fully arrived it checks it against the request (the number
// of vectors must equal the number of inputs, else ErrorClass::kMismatch), and passes the
// usage on, so the record gets t_end (the last byte), prompt_tokens and its error class.
//
// Thread-safety: ParseEmbeddingsResponse is pure; a handler belongs to one request on the
// io thread. The parse (a DOM parse of every vector) runs there, once per request;
// bench/embeddings_bench.cc measures it against the server's cost of writing the answer.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "client/http_client.h"
#include "client/json_answer.h"
#include "core/status.h"

namespace infereng::client {

struct EmbeddingsResponse {
  int64_t vectors = 0;         // entries of `data`
  int64_t dimension = -1;      // floats per vector (all equal); -1: base64 or no vector
  int64_t prompt_tokens = -1;  // usage.prompt_tokens; -1: not reported
};

// ProtocolError naming the field for a malformed answer; an "error" object gives a
// ProtocolError "error object in the answer: TYPE: MESSAGE".
Result<EmbeddingsResponse> ParseEmbeddingsResponse(std::string_view body);

class EmbeddingsHandler final : public JsonAnswerHandler {
 public:
  // `inner` gets every callback; `expected_items` is the number of inputs sent.
  EmbeddingsHandler(RecordingHandler* inner, int32_t expected_items) : JsonAnswerHandler(inner), expected_(expected_items) {}

 private:
  Verdict Check(std::string_view body) const override;
  int32_t expected_;
};

}  // namespace infereng::client
