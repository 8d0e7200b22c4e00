// Request bodies for the OpenAI-compatible endpoints, and what the target accepts.
//
// Every body sends max_tokens, stream=true and stream_options.include_usage; the extras
// (ignore_eos + min_tokens to force the output length, continuous_usage_stats for
// per-chunk token counts) only go to engines known to accept them (docs engines.md §1, §5):
// OpenAI-style servers that validate strictly reject unknown fields. When the length cannot
// be forced the run is reported "output length not controlled".
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/status.h"

namespace infereng::bench {

enum class ApiEndpoint { kChat, kCompletions, kEmbeddings, kRerank, kTranscriptions };

// "chat", "completions", "embeddings", "rerank", "transcriptions" (the card's bench.endpoint,
// --endpoint, manifests).
const char* ApiEndpointName(ApiEndpoint e);
// InvalidArgument naming `flag` and the valid names otherwise.
Result<ApiEndpoint> ParseApiEndpoint(const std::string& name, const std::string& flag);

// What the target engine supports, decided from its identity (engine_probe.h).
struct EngineCaps {
  bool ignore_eos = false;
  bool min_tokens = false;
  bool continuous_usage = false;
  bool length_controlled() const { return ignore_eos || min_tokens; }
};

EngineCaps CapsForEngine(const std::string& engine);  // "vllm", "sglang", "llamacpp", ...

// --length-control: "auto" keeps `caps` (what the engine is known to accept); "ignore_eos",
// "min_tokens" or "both" send those fields whatever the engine (for one infereng does not
// recognise); "none" sends neither. InvalidArgument naming the flag otherwise.
Status ApplyLengthControl(const std::string& mode, EngineCaps* caps);

// A prompt: plain text, or chat messages (JSON array of {role, content}) from a dataset.
struct PromptContent {
  std::string text;                // used when messages is null
  nlohmann::json messages;         // null or an array
  // Chat only: image_url parts (data URLs) after the text, in one user message.
  std::vector<std::string> image_urls = {};
};

struct BodyOptions {
  std::string model;
  ApiEndpoint endpoint = ApiEndpoint::kChat;
  EngineCaps caps;
  bool stream = true;  // false: "stream": false (no stream_options), the answer comes whole
  std::string response_format = "json";  // transcriptions: json | verbose_json
};

// The JSON body of one request with `max_tokens` output tokens: streamed (with
// stream_options.include_usage) unless opt.stream is false.
std::string BuildRequestBody(const BodyOptions& opt, const PromptContent& prompt, int max_tokens);

// The request path under the server root: "/v1/chat/completions", "/v1/completions",
// "/v1/embeddings", "/v1/rerank" or "/v1/audio/transcriptions".
const char* EndpointPath(ApiEndpoint e);

// The JSON body of one /v1/embeddings request: {"model":..., "input":[...]} with one string
// per input, in order (the answer must have one vector per input). Not streamed.
std::string BuildEmbeddingsBody(const BodyOptions& opt, const std::vector<std::string>& inputs);

// The JSON body of one /v1/rerank request: {"model":..., "query":..., "documents":[...]}
// in order, no top_n (the answer must score every document), not streamed.
std::string BuildRerankBody(const BodyOptions& opt, const std::string& query, const std::vector<std::string>& documents);

// A multipart/form-data body and its Content-Type (with the boundary).
struct MultipartBody {
  std::string content_type;
  std::string body;
};

// One /v1/audio/transcriptions request for `wav` (a WAV file): the form fields file
// (clip.wav, audio/wav), model, response_format (opt.response_format) and stream; with
// stream_include_usage and stream_continuous_usage_stats for engines that take them
// (caps.continuous_usage: vLLM's form fields), and max_completion_tokens when
// `max_tokens` > 0 (the card's product.max_output_tokens: a cap, not a target; a
// transcript's length is the audio's). The boundary never occurs in the body.
MultipartBody BuildTranscriptionBody(const BodyOptions& opt, const std::string& wav, int max_tokens);

// Embeddings and rerank: one JSON answer per request, not a token stream.
inline bool PrefillOnly(ApiEndpoint e) { return e == ApiEndpoint::kEmbeddings || e == ApiEndpoint::kRerank; }

}  // namespace infereng::bench
