// SseParser: an incremental Server-Sent-Events parser fed arbitrary byte chunks.
//
// It owns only framing: lines (LF, CRLF or lone CR, split anywhere across Feed calls),
// fields (`data:` with or without the space, `event:`, `id:`, `retry:`, `:` comments) and
// event boundaries (a blank line). What an event *means* belongs to dialect.h.
//
// Real engines bend the SSE spec; the quirks handled here (docs/engines.md §1):
//   - TGI writes `data:{json}` (no space), and sends `:` keep-alive comments.
//   - TensorRT-LLM writes a trailing space before the blank line (kept in `data`; the
//     dialect trims it before JSON).
//   - llama.cpp <= 2025-02 reports failures inside a 200 stream as `error: {...}`, a field
//     a data-only parser would silently drop: the event comes out with `is_error_field`.
//   - the stream may end without a final blank line: Finish() flushes the pending event.
//
// Memory is bounded: a line longer than max_line_bytes or an event whose data exceeds
// max_event_bytes is a protocol error (never an unbounded buffer). After an error the
// parser stays failed and returns the same error.
//
// Thread-safety: none; one parser per stream. Hot path: no allocation per event once the
// caller's output vector and the parser's buffers have grown to the stream's event size.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace infereng::client {

struct SseEvent {
  std::string event;           // `event:` field ("" for the default "message")
  std::string data;            // `data:` lines joined with '\n' (or the `error:` value)
  std::string id;              // last `id:` field of this event
  bool is_error_field = false; // llama.cpp legacy `error: {...}` line; `data` holds its value
};

struct SseParserOptions {
  std::size_t max_line_bytes = 1 << 20;   // one line (1 MiB)
  std::size_t max_event_bytes = 4 << 20;  // one event's data (4 MiB)
};

class SseParser {
 public:
  explicit SseParser(SseParserOptions options = {});

  // Parses `bytes` and appends every event completed by them to `out` (never clears it).
  // Returns a ProtocolError naming the limit and the byte offset when a bound is exceeded.
  Status Feed(std::string_view bytes, std::vector<SseEvent>& out);

  // End of stream: an event with data but no terminating blank line is flushed into `out`.
  Status Finish(std::vector<SseEvent>& out);

  // Counters for diagnostics (not needed for correctness).
  std::uint64_t bytes_seen() const { return bytes_seen_; }
  std::uint64_t comments_seen() const { return comments_seen_; }
  std::uint64_t ignored_lines() const { return ignored_lines_; }  // unknown fields, no colon

 private:
  Status ProcessLine(std::string_view line, std::vector<SseEvent>& out);
  void Dispatch(std::vector<SseEvent>& out);

  SseParserOptions options_;
  std::string line_;          // the current, unterminated line
  SseEvent pending_;          // the event being built
  bool has_data_ = false;     // pending_ got at least one data (or error) line
  bool last_was_cr_ = false;  // a CR ended the previous line: skip a following LF
  Status failed_;             // sticky error
  std::uint64_t bytes_seen_ = 0;
  std::uint64_t comments_seen_ = 0;
  std::uint64_t ignored_lines_ = 0;
};

}  // namespace infereng::client
