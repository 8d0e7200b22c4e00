// Turns an OpenAI request body (JSON) into the parameters the server acts on, or into an
// OpenAI-shaped error: {"error":{"message","type","param","code"}}.
//
// Accepted: model, messages (chat) / prompt (completions: a string, a one-element array of
// strings, or an array of token ids), max_tokens / max_completion_tokens, min_tokens,
// ignore_eos, stop (string or array), stream, stream_options.{include_usage,
// continuous_usage_stats}, seed, cache_salt, and sampling knobs (temperature, top_p, ...: type-checked,
// otherwise ignored). Refused with 400: n > 1, best_of > 1, tools / functions, logprobs /
// top_logprobs, echo, stream_options without stream, wrong types, out-of-range values.
// Pure function of its inputs; the fuzz harness fuzz/http_request_fuzzer.cc drives it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "card/vision.h"

namespace infereng::serve {

enum class Endpoint { kChat, kCompletions };

struct ApiError {
  int http_status = 400;
  std::string message;
  std::string type = "invalid_request_error";   // or "not_found_error", "server_error", ...
  std::string param;                            // "" when no single parameter is at fault
  std::string code;                             // "" = null

  // {"error":{"message":...,"type":...,"param":...,"code":...}} (vLLM also puts the HTTP
  // status in "code" when none is given; we do the same).
  std::string ToJson() const;
};

inline ApiError MakeApiError(int status, std::string message, std::string type = "invalid_request_error",
                             std::string param = {}) {
  ApiError e;
  e.http_status = status;
  e.message = std::move(message);
  e.type = std::move(type);
  e.param = std::move(param);
  return e;
}

struct CompletionParams {
  Endpoint endpoint = Endpoint::kChat;
  std::vector<uint32_t> prompt_ids;   // tokenized prompt (text_model.h rule)
  int32_t max_tokens = 0;             // resolved (default applied, >= 1)
  int32_t min_tokens = 0;
  bool ignore_eos = false;
  std::vector<std::string> stop;
  bool stream = false;
  bool include_usage = false;
  bool continuous_usage = false;
  std::optional<uint64_t> seed;
  std::string cache_salt;             // vLLM's prefix-cache salt (serve/tenant_cache.h)
  // Chat image parts (serve/image_input.h): their count, their tokens by the model's rule
  // (inside prompt_ids, at positions [image_begin, image_end): first to last image token)
  // and the encoder patches they cost.
  int32_t images = 0;
  int64_t image_tokens = 0;
  int64_t image_patches = 0;
  int32_t image_begin = 0;
  int32_t image_end = 0;
};

struct ParseLimits {
  std::string_view model_name;        // the served model id; other names get 404
  int64_t max_model_len = 131072;
  int32_t default_max_tokens = 16;    // completions default (chat: rest of the context)
  const card::VisionSpec* vision = nullptr;  // null: image parts are refused (a text-only model)
};

struct ParseOutcome {
  CompletionParams params;
  std::optional<ApiError> error;      // set: answer with it, params meaningless
};

ParseOutcome ParseCompletionRequest(std::string_view body, Endpoint endpoint, const ParseLimits& limits);

// ---- POST /v1/embeddings (serve/embeddings.h makes the vectors)
// Accepted: model, input (a string, or an array of 1..2048 non-empty strings), encoding_format
// "float", dimensions (1..kEmbeddingDimension: the vector is cut and re-normalised), user.
// Refused with 400 naming the field: a missing or empty input, an item that is not a
// string (token-id inputs included), an empty item, an input of max_model_len tokens or
// more, a batch whose tokens together reach max_model_len (the engine runs a batch as one
// prefill), encoding_format base64, wrong types.
inline constexpr int32_t kEmbeddingDimension = 384;
inline constexpr std::size_t kMaxEmbeddingInputs = 2048;

struct EmbeddingsParams {
  std::vector<std::vector<uint32_t>> inputs;  // token ids per input, in order
  int32_t dimensions = kEmbeddingDimension;
  int64_t prompt_tokens = 0;                  // summed over the inputs
};

struct EmbeddingsOutcome {
  EmbeddingsParams params;
  std::optional<ApiError> error;  // set: answer with it, params meaningless
};

EmbeddingsOutcome ParseEmbeddingsRequest(std::string_view body, const ParseLimits& limits);

// ---- POST /v1/rerank and /rerank (serve/rerank.h scores the pairs)
// Accepted: model, query (a non-empty string), documents (an array of 1..1000 non-empty
// strings), top_n (>= 1; more than the documents means all of them, as vLLM does),
// return_documents (bool, default true), user. Refused with 400 naming the field: a missing
// or empty query, documents missing, not an array, empty, too many, or with an item that is
// not a string (objects included: {"text": ...} is Cohere v2's, not served here), a pair
// (query + document) of max_model_len tokens or more, pairs whose tokens together reach
// max_model_len (the engine runs a request as one prefill), top_n < 1, TEI's "texts"
// (with a hint), wrong types. A pair's tokens are the query's plus the document's, counted
// as serve counts text (text_model.h); no special tokens are added.
inline constexpr std::size_t kMaxRerankDocuments = 1000;

struct RerankParams {
  std::vector<uint32_t> query;                 // the query's token ids
  std::vector<std::vector<uint32_t>> documents;  // token ids per document, in order
  std::vector<std::string> texts;              // the documents as sent (echoed in the answer)
  int64_t top_n = 0;                           // results to return: min(top_n, documents)
  bool return_documents = true;
  int64_t prompt_tokens = 0;                   // Σ (query + document_k) tokens
};

struct RerankOutcome {
  RerankParams params;
  std::optional<ApiError> error;  // set: answer with it, params meaningless
};

RerankOutcome ParseRerankRequest(std::string_view body, const ParseLimits& limits);

// POST /tokenize body: {"prompt": "..."} (vLLM) or {"content": "..."} (llama.cpp), or
// {"messages": [...]}. On success fills `ids`.
std::optional<ApiError> ParseTokenizeRequest(std::string_view body, std::vector<uint32_t>& ids);

}  // namespace infereng::serve
