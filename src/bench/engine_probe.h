// Engine discovery and control-plane calls against a target (blocking; before/after a
// run, never during the measured phase).
//
// Identity comes from whatever the server answers (docs engines.md §2): /version (vLLM,
// TensorRT-LLM, infereng), /v1/models (model id; owned_by names vLLM/llama.cpp/...),
// /props (llama.cpp), /info (TGI), /get_server_info (SGLang). Every probe's HTTP status
// goes into the manifest so a reader can see what was asked and what answered.
// /tokenize is used for exact prompt lengths in the two shapes that exist: vLLM
// {"count": N, "tokens": [...]} and llama.cpp {"tokens": [...]}. The probe tries the request
// fields one at a time ("prompt", then "content") and the counter sends the one that worked,
// so probe and use cannot disagree.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "bench/prompt.h"
#include "bench/request_body.h"
#include "client/http_client.h"
#include "core/status.h"

namespace infereng::bench {

struct ServerInfo {
  std::string engine = "unknown";  // vllm|sglang|tgi|llamacpp|tensorrt-llm|infereng|ollama|unknown
  std::string engine_version;
  std::string model_id;            // first model of /v1/models ("" if none)
  std::string model_revision;      // when the server reports one (TGI model_sha)
  bool has_tokenize = false;       // POST /tokenize answered with a count
  std::string tokenize_field;      // the text field /tokenize accepted: "prompt" | "content"
  bool has_metrics = false;        // GET /metrics answered 200
  bool has_slots = false;          // llama.cpp only: GET /slots answered 200 (--slots)
  nlohmann::json probes = nlohmann::json::object();  // path -> HTTP status (0: no answer)
};

// Probes the target. Unavailable when nothing answers at all (connection refused, DNS).
Result<ServerInfo> ProbeServer(const client::ClientOptions& opt, Nanos per_call_timeout);

// Polls GET /health until it answers 200, up to `timeout`. Unavailable on timeout.
Status WaitHealthy(const client::ClientOptions& opt, Nanos timeout);

// A token counter backed by POST /tokenize (messages form for chat on engines that apply
// the chat template there, vLLM and infereng; plain text otherwise).
TokenCountFn MakeTokenizeCounter(const client::ClientOptions& opt, const ServerInfo& info,
                                 ApiEndpoint endpoint);

// usage.prompt_tokens the server reports for `text` sent as one user message (chat) or the
// prompt (completions), or as the one input of an embeddings request, or (rerank) half the
// tokens of one request with the text as both query and document: one non-streamed
// request (max_tokens 1 for generation), before the run. Counts
// what /tokenize on plain text misses (chat template, BOS). ProtocolError when the answer has
// no usage; the HTTP status and the server's message otherwise.
Result<int64_t> ServerPromptTokens(const client::ClientOptions& opt, ApiEndpoint endpoint,
                                   const std::string& model, const std::string& text, Nanos timeout);

// GET /metrics as text; NotFound when the server has none.
Result<std::string> ScrapeMetrics(const client::ClientOptions& opt);

}  // namespace infereng::bench
