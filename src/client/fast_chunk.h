// The fast path for the common OpenAI streaming chunk: one pass over the bytes, no DOM.
//
// Why: at 100k events/s the client's CPU per token was dominated by building an nlohmann
// DOM for every chunk (a map node and a string per key) only to read two or three fields
// (issue 17). TryFastOpenAiChunk scans the payload once, validates it as JSON as strictly
// as nlohmann does for what it accepts, and reads only what InterpretData would:
// choices[].delta/message.{content, reasoning_content, reasoning}, choices[].text
// (completions), choices[].finish_reason, and a top-level `usage`.
//
// It declines (returns false; the caller then runs the full parse, which also produces the
// error message for bad input) on anything it does not handle exactly like the full parse:
// a top-level `error` or `timings`, `\u` escapes, number exponents or very long numbers, a
// usage count that is not a plain non-negative integer, a key with an escape, a repeated
// key it reads, nesting deeper than 32, invalid UTF-8 or any malformed JSON. Declining is
// always safe; accepting must give the same ChunkInfo as the full parse (the tests in
// fast_chunk_test.cc check both on every fixture and on the unusual shapes).
//
// Thread-safety: a pure function. No allocation beyond the ChunkInfo's strings (short text
// stays in their small-string buffer).
#pragma once

#include <string_view>

#include "client/dialect.h"

namespace infereng::client {

// `payload`: one event's data, trimmed, not "[DONE]". Only kOpenAiChat and
// kOpenAiCompletions are handled (false for the others). On true `info` holds the event's
// meaning; on false its contents are unspecified and the caller must start again.
bool TryFastOpenAiChunk(Dialect dialect, std::string_view payload, ChunkInfo& info);

// The full parse (nlohmann DOM + the dialect's adapter) without the fast path: the
// reference the fast path must agree with. InterpretData (dialect.h) = fast path, else this.
Result<ChunkInfo> InterpretDataFull(Dialect dialect, std::string_view data, bool is_error_field = false);

}  // namespace infereng::client
