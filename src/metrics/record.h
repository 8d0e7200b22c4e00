// RequestRecord: the raw facts of one request, measured (bench) or simulated (twin).
// One schema for both, so every analysis works on either (docs/results-schema.md).
//
// The hot path only fills these fields; everything derived (TTFT, ITL, TPOT, E2E,
// goodput) is computed later by metrics/ from records. Definitions:
// docs/metrics.md. All times are steady_clock nanoseconds on one run's clock
// (virtual nanoseconds for the twin); -1 means "did not happen".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"

namespace infereng::metrics {

enum class ErrorClass {
  kNone = 0,
  kConnect,      // could not connect / connection refused / TLS failure
  kTimeout,      // client-side timeout (request or stall)
  kHttp4xx,      // non-2xx status 400-499 (429 included: overload)
  kHttp5xx,      // status >= 500
  kStreamError,  // error object inside a 200 stream
  kProtocol,     // unparseable response
  kIncomplete,   // stream ended without a finish reason / [DONE]
  kCancelled,    // cancelled by the client (run interrupted)
  kRejected,     // twin only: admission control rejected it (serve answers 429)
  // Cancelled because the client stopped the run (Ctrl-C / SIGTERM, or a sweep point's early
  // stop) while the request was in flight: not an outcome of the server, so neither a
  // success nor a failure; summaries count it apart and leave it out of attainment.
  kInterrupted,
  // A complete 200 answer that contradicts the request: vectors != inputs sent (embeddings,
  // client/embeddings_response.h), results != min(top_n, documents) (rerank_response.h).
  kMismatch,
};

// One SSE event that carried output text (role-only, empty and usage-only chunks are not
// recorded). `tokens` comes from usage growth when the server reports it per chunk, else
// the client's count, else 1.
struct Chunk {
  Nanos t = 0;
  int32_t tokens = 1;
  bool reasoning = false;  // carried reasoning content only
};

enum class TokenSource { kUsageContinuous, kUsageFinal, kClientCount, kSimulated };

struct RequestRecord {
  uint64_t id = 0;
  int32_t tenant = 0;
  int32_t replica = -1;        // twin: which replica served it
  bool cold = false;           // first requests after the server became healthy

  Nanos t_sched = -1;          // intended send (open loop) or slot freed (closed loop)
  Nanos t_send = -1;           // first byte of the request written
  Nanos t_first_byte = -1;     // status line received
  std::vector<Chunk> chunks;   // output-carrying events, in arrival order
  Nanos t_end = -1;            // stream closed or [DONE]

  // Server-side breakdown when known (twin always; real engines never): -1 otherwise.
  Nanos t_server_scheduled = -1;  // left the waiting queue (first scheduled)
  Nanos t_prefill_done = -1;      // prompt fully processed
  // Phase durations the engine reported for this request (its `timings` object: the
  // embedded engine, llama.cpp), on the engine's own clock; -1 when it reported none.
  // Stored as reported; the TTFT split is derived later (metrics/derive.h).
  Nanos server_queue = -1;        // arrival at the engine -> first scheduled
  Nanos server_prefill = -1;      // first scheduled (prefill start) -> first token
  Nanos server_decode = -1;       // first token -> last token
  bool server_timings_malformed = false;  // a `timings` object was unusable (ignored)

  int32_t input_tokens_target = 0;  // embeddings: the sum over the request's inputs
  int32_t output_tokens_target = 0;
  // Embeddings (POST /v1/embeddings): the inputs the request carried, each answered by one
  // vector; 0 for a text-generation request. Such a request has no chunks (no TTFT/ITL);
  // its E2E ends at t_end, when the whole JSON answer has arrived (docs/metrics.md).
  int32_t items = 0;
  // Rerank (POST /v1/rerank): the query's tokens as planned (each item is a pair of the
  // query and one document); 0 for any other request. With items > 0 it marks a rerank
  // request, whose items are documents (metrics/embeddings_summary.h).
  int32_t query_tokens = 0;
  // Vision (chat image parts): the images the request carried and their prompt tokens by
  // the model's rule, as the client planned them (the server counts them into
  // usage.prompt_tokens, which reports no split); 0 without images.
  int32_t images = 0;
  int32_t image_tokens = 0;
  // Transcription: the clip's length and its audio tokens by the model's rule (card/audio.h;
  // part of the prompt, as images' are); 0 for any other request.
  int32_t audio_ms = 0;
  int32_t audio_tokens = 0;
  int64_t prompt_tokens = -1;      // usage.prompt_tokens (-1: not reported)
  int64_t completion_tokens = -1;  // usage.completion_tokens
  int64_t cached_tokens = -1;      // usage.prompt_tokens_details.cached_tokens
  // usage.completion_tokens_details.reasoning_tokens (OpenAI, vLLM; the twin sets it): how
  // many of completion_tokens were reasoning; -1: not reported (the count then comes from
  // the stream's reasoning chunks, metrics/derive.h).
  int64_t reasoning_tokens = -1;
  TokenSource token_source = TokenSource::kClientCount;

  int http_status = 0;
  ErrorClass error = ErrorClass::kNone;
  std::string error_message;       // never contains secrets
  std::string finish_reason;       // "stop", "length", ... ("" if none arrived)
  // Re-sent after a kept-alive connection failed before any response byte (bench only).
  int32_t retries = 0;
  std::string retry_cause;         // "" when not retried
  Nanos retry_lost = 0;            // first send -> re-send

  int8_t quality_pass = -1;        // -1 not checked, 0 failed, 1 passed

  // Sessions and agent tasks (workload/sessions.h): the session (task) id, -1 for a
  // single call; the call's 0-based turn (step) and the session's planned turns. A step
  // of an agent task may be several parallel calls (traffic.agent_parallel): the call's
  // branch in its step, the step's calls, and the session's planned calls in all (= turns
  // without parallel calls).
  int64_t session = -1;
  int32_t turn = 0;
  int32_t turns = 1;
  int32_t branch = 0;
  int32_t branches = 1;
  int32_t calls = 1;

  bool ok() const { return error == ErrorClass::kNone; }
  int64_t OutputTokens() const;    // completion_tokens if reported, else sum of chunk tokens
};

// Stable snake_case names used in JSON, tables and summaries ("none", "connect",
// "timeout", "http_4xx", "http_5xx", "stream_error", "protocol", "incomplete",
// "cancelled", "rejected", "interrupted", "mismatch"; "usage_continuous", "usage_final", "client_count", "simulated").
std::string_view ErrorClassName(ErrorClass e);
std::optional<ErrorClass> ParseErrorClass(std::string_view name);
std::string_view TokenSourceName(TokenSource s);
std::optional<TokenSource> ParseTokenSource(std::string_view name);

}  // namespace infereng::metrics
