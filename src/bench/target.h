// The benchmark target: its URL (never carrying secrets into any output) and the API key.
//
// URLs: `--target` may be the server root ("http://h:8000"), the OpenAI base URL
// ("http://h:8000/v1") or a full endpoint URL (".../v1/chat/completions",
// ".../v1/completions", ".../v1/embeddings", ".../v1/rerank" (or /rerank, /v2/rerank)); all mean the same server, and an endpoint URL also names the API. API calls go to ROOT/v1/..., control
// calls (/health, /version, /tokenize, /metrics) to ROOT/.... User info ("user:pass@"),
// query strings and fragments are refused — credentials belong in headers — and the
// error shows the URL with them removed (RedactUrl), so a token never reaches a terminal.
//
// API key: $OPENAI_API_KEY by default, or --api-key-env NAME, or --api-key-file PATH
// (first line, trimmed). The key only ever goes into the Authorization header; errors
// name the variable or file, never the value.
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"

namespace infereng::bench {

struct Target {
  std::string root;     // "http://127.0.0.1:8000" (+ a prefix other than /v1, if any)
  std::string display;  // safe to print and store (same as root)
  std::string endpoint; // "chat" | "completions" | "embeddings" | "rerank" when the URL named one; "" otherwise
};

Result<Target> ParseTarget(std::string_view url);

// The URL without user info, query and fragment (for messages about a refused URL).
std::string RedactUrl(std::string_view url);

struct ApiKeyOptions {
  std::string env_name;   // "" = OPENAI_API_KEY (optional); set = must exist
  std::string file;       // "" = not used; set = must be readable and non-empty
};

// The key, or "" when none is configured (default variable unset).
Result<std::string> LoadApiKey(const ApiKeyOptions& opt);

// Replaces every occurrence of `secret` in `text` with "[redacted]" (no-op for "").
std::string ScrubSecret(std::string text, const std::string& secret);

}  // namespace infereng::bench
