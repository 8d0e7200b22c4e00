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
// Hot path (the client's per-token path, issue 17): Feed with a callback hands each event
// out as views (SseEventView), with no copy and no allocation when the event's one `data:`
// line lies whole inside the bytes fed — the usual case, one event per socket read. Only
// what must outlive a Feed call is copied into the parser's own buffers (a line split
// across reads; a data line whose blank line has not arrived yet; multi-line data;
// `event:`/`id:`), and those buffers keep their capacity, so a stream allocates nothing per
// event once they have grown. The vector overloads (tests, fuzzers) copy each event out.
//
// Thread-safety: none; one parser per stream.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/status.h"

namespace infereng::client {

struct SseEvent {
  std::string event;           // `event:` field ("" for the default "message")
  std::string data;            // `data:` lines joined with '\n' (or the `error:` value)
  std::string id;              // last `id:` field of this event
  bool is_error_field = false; // llama.cpp legacy `error: {...}` line; `data` holds its value
};

// The same event as views, valid only during the callback that receives it.
struct SseEventView {
  std::string_view event;
  std::string_view data;
  std::string_view id;
  bool is_error_field = false;
};

struct SseParserOptions {
  std::size_t max_line_bytes = 1 << 20;   // one line (1 MiB)
  std::size_t max_event_bytes = 4 << 20;  // one event's data (4 MiB)
};

class SseParser {
 public:
  explicit SseParser(SseParserOptions options = {});

  // Parses `bytes` and calls on_event(const SseEventView&) -> bool for every event they
  // complete, in order. Returning false stops the parse at once (the caller gave up on the
  // stream); Feed then returns Ok and the parser must not be used again. Returns a
  // ProtocolError naming the limit and the byte offset when a bound is exceeded (the events
  // completed before it have been delivered).
  template <typename F>
    requires std::is_invocable_r_v<bool, F&, const SseEventView&>
  Status Feed(std::string_view bytes, F&& on_event) {
    return FeedImpl(bytes, SinkOf(on_event));
  }
  // End of stream: an event with data but no terminating blank line is delivered.
  template <typename F>
    requires std::is_invocable_r_v<bool, F&, const SseEventView&>
  Status Finish(F&& on_event) {
    return FinishImpl(SinkOf(on_event));
  }

  // The same, appending a copy of every event to `out` (never clears it).
  Status Feed(std::string_view bytes, std::vector<SseEvent>& out);
  Status Finish(std::vector<SseEvent>& out);

  // Counters for diagnostics (not needed for correctness).
  std::uint64_t bytes_seen() const { return bytes_seen_; }
  std::uint64_t comments_seen() const { return comments_seen_; }
  std::uint64_t ignored_lines() const { return ignored_lines_; }  // unknown fields, no colon

 private:
  // A non-owning callback (the caller's callable outlives the Feed call).
  struct Sink {
    void* ctx;
    bool (*fn)(void*, const SseEventView&);
    bool operator()(const SseEventView& e) const { return fn(ctx, e); }
  };
  template <typename F>
  static Sink SinkOf(F& f) {
    return Sink{const_cast<void*>(static_cast<const void*>(&f)),
                [](void* c, const SseEventView& e) -> bool { return (*static_cast<F*>(c))(e); }};
  }

  Status FeedImpl(std::string_view bytes, Sink sink);
  Status FinishImpl(Sink sink);
  // `stable`: `line` points into the bytes of the current Feed (valid until it returns),
  // not into line_. Sets *stop when the sink asked to stop.
  Status ProcessLine(std::string_view line, bool stable, Sink sink, bool* stop);
  // Copies a data view that points into the caller's bytes into data_buf_.
  void OwnData();
  bool Dispatch(Sink sink);

  SseParserOptions options_;
  std::string line_;            // the current, unterminated line
  // The pending event. data_ is a view: into the current Feed's bytes while data_in_input_,
  // else into data_buf_ (OwnData before the bytes go away).
  std::string_view data_;
  bool data_in_input_ = false;
  std::string data_buf_;
  std::string event_;
  std::string id_;
  bool is_error_field_ = false;
  bool has_data_ = false;       // the pending event got at least one data (or error) line
  bool last_was_cr_ = false;    // a CR ended the previous line: skip a following LF
  Status failed_;               // sticky error
  std::uint64_t bytes_seen_ = 0;
  std::uint64_t comments_seen_ = 0;
  std::uint64_t ignored_lines_ = 0;
};

}  // namespace infereng::client
