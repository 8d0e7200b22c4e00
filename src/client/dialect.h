// Dialects: what one SSE event of a given API means, as a small table of adapters.
//
// The SSE parser (sse_parser.h) frames events; a dialect turns one event into a ChunkInfo:
// output text (content / reasoning), usage, finish reason, [DONE], or an error object that
// arrived inside an HTTP 200 stream. Each dialect is one adapter function chosen by table
// lookup, so engine quirks live in one place (docs: docs/engines.md §1), not in
// if-chains through the client.
//
// Rules applied for every dialect:
//   - output-carrying = non-empty text or reasoning text. Role-only deltas, empty text,
//     usage-only and finish-only chunks carry no output and are never counted.
//   - any data object with a top-level "error" key (and any llama.cpp `error:` line or
//     `event: error` event) is an error, whatever the HTTP status.
//   - zeroed usage objects (Ollama puts {0,0,0} on every completions chunk) are ignored.
//   - data is trimmed of surrounding whitespace before JSON; `[DONE]` is optional.
//   - a finish reason of "" (TGI completions) or null means "none".
//
// StreamTokenCounter turns a stream's ChunkInfos into per-chunk token counts: usage growth
// when the server reports usage on every output chunk (continuous usage), else 1 per chunk
// reconciled with the final usage total at the end.
//
// Thread-safety: the functions are pure; a StreamTokenCounter belongs to one stream.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "client/sse_parser.h"
#include "core/status.h"
#include "metrics/record.h"

namespace infereng::client {

enum class Dialect {
  kOpenAiChat,         // /v1/chat/completions: choices[].delta.{content,reasoning_content,reasoning}
  kOpenAiCompletions,  // /v1/completions: choices[].text
  kTgiGenerate,        // TGI /generate_stream: token.text, details on the last event, no [DONE]
  kLlamaCppCompletion, // llama.cpp native /completion: content, stop, no [DONE]
  // /v1/audio/transcriptions with stream=true: vLLM's "transcription.chunk" events (chat's
  // choices[].delta.content, usage with stream_include_usage) and OpenAI's typed events
  // ("transcript.text.delta" {delta}, "transcript.text.done" {text, usage: {input_tokens,
  // output_tokens}}).
  kOpenAiTranscription,
};

// Static facts about a dialect (the data half of the adapter table).
struct DialectTraits {
  Dialect dialect;
  std::string_view name;          // "chat", "completions", "tgi", "llamacpp"
  std::string_view default_path;  // relative to the base URL's prefix, e.g. "/chat/completions"
  bool sends_done;                // the server normally ends with `data: [DONE]`
};

const DialectTraits& TraitsOf(Dialect dialect);
// Accepts the names above (also "openai-chat", "openai-completions", "tgi-generate",
// "llamacpp-completion"). InvalidArgument lists the valid names.
Result<Dialect> ParseDialect(std::string_view name);

// Server-reported token counts; -1 = not reported.
struct Usage {
  int64_t prompt_tokens = -1;
  int64_t completion_tokens = -1;
  int64_t cached_tokens = -1;
  int64_t reasoning_tokens = -1;  // completion_tokens_details.reasoning_tokens
  bool present() const { return prompt_tokens >= 0 || completion_tokens >= 0; }
};

// The request's phases as the server reports them in a `timings` object (llama.cpp's, and
// the embedded engine's, which adds queue_ms; docs/serve.md), in the server's milliseconds;
// -1 = not reported. prompt_ms is the prefill (first scheduled -> first token),
// predicted_ms the decode (first token -> last). A `timings` that is not an object, or
// whose phase fields are not finite non-negative numbers, is ignored whole and marked
// `malformed` (counted in the summary), never read as zeros.
struct ServerTimings {
  double queue_ms = -1;
  double prefill_ms = -1;
  double decode_ms = -1;
  bool malformed = false;
  bool present() const { return queue_ms >= 0 || prefill_ms >= 0 || decode_ms >= 0; }
};

// What one SSE event means.
struct ChunkInfo {
  bool done = false;        // the `[DONE]` sentinel
  std::string text;         // visible output text of this event (all choices)
  std::string reasoning;    // reasoning text of this event (reasoning_content / reasoning)
  Usage usage;              // non-zero usage carried by this event, if any
  ServerTimings timings;    // a top-level `timings` object in this event, if any
  std::string finish_reason;  // "" = none in this event
  bool error = false;       // error object / `error:` line inside the stream
  std::string error_message;  // "type: message" from the error object (no secrets in it)

  bool has_output() const { return !text.empty() || !reasoning.empty(); }
  bool reasoning_only() const { return text.empty() && !reasoning.empty(); }
};

// Interprets one event. A data payload that is not `[DONE]` and not valid JSON of the
// expected shape is a ProtocolError quoting (a bounded prefix of) the payload.
Result<ChunkInfo> InterpretEvent(Dialect dialect, const SseEventView& event);
Result<ChunkInfo> InterpretEvent(Dialect dialect, const SseEvent& event);
// Same, for a raw payload (fuzzing, tests; also a non-streamed JSON response body).
Result<ChunkInfo> InterpretData(Dialect dialect, std::string_view data, bool is_error_field = false);

// Per-stream token accounting into metrics::Chunk entries.
//   On(t, info): appends a Chunk for output-carrying events; remembers usage.
//   Finish(): sets tokens per chunk and returns the TokenSource:
//     kUsageContinuous: every output chunk carried completion usage → tokens = growth;
//     kUsageFinal: final usage known → 1 per chunk, spread so the sum equals the total
//                  (when the total is at least the chunk count);
//     kClientCount: no usage → 1 per chunk.
class StreamTokenCounter {
 public:
  void On(Nanos t, const ChunkInfo& info);
  metrics::TokenSource Finish();

  const std::vector<metrics::Chunk>& chunks() const { return chunks_; }
  std::vector<metrics::Chunk>& mutable_chunks() { return chunks_; }
  const Usage& last_usage() const { return usage_; }  // the latest reported usage

 private:
  std::vector<metrics::Chunk> chunks_;
  Usage usage_;
  int64_t completion_before_ = 0;  // completion usage before the current output chunk
  bool continuous_ = true;         // every output chunk so far carried completion usage
};

}  // namespace infereng::client
