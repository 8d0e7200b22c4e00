// SseParser implementation: see sse_parser.h for the framing rules, the quirks and the
// copy rules of the hot path.
#include "client/sse_parser.h"

#include <cstring>
#include <string>

namespace infereng::client {

namespace {

// The index of the first '\n' or '\r' at or after pos; bytes.size() when there is none.
std::size_t LineEnd(std::string_view bytes, std::size_t pos) {
  const char* begin = bytes.data() + pos;
  const std::size_t n = bytes.size() - pos;
  const void* lf = std::memchr(begin, '\n', n);
  const std::size_t upto = lf ? static_cast<std::size_t>(static_cast<const char*>(lf) - begin) : n;
  const void* cr = std::memchr(begin, '\r', upto);
  return pos + (cr ? static_cast<std::size_t>(static_cast<const char*>(cr) - begin) : upto);
}

}  // namespace

SseParser::SseParser(SseParserOptions options) : options_(options) {}

Status SseParser::Feed(std::string_view bytes, std::vector<SseEvent>& out) {
  return Feed(bytes, [&out](const SseEventView& e) {
    out.push_back(SseEvent{std::string(e.event), std::string(e.data), std::string(e.id), e.is_error_field});
    return true;
  });
}

Status SseParser::Finish(std::vector<SseEvent>& out) {
  return Finish([&out](const SseEventView& e) {
    out.push_back(SseEvent{std::string(e.event), std::string(e.data), std::string(e.id), e.is_error_field});
    return true;
  });
}

Status SseParser::FeedImpl(std::string_view bytes, Sink sink) {
  if (!failed_.ok()) return failed_;
  std::size_t pos = 0;
  bool stop = false;
  while (pos < bytes.size()) {
    if (last_was_cr_) {
      last_was_cr_ = false;
      if (bytes[pos] == '\n') {  // the LF of a CRLF split across (or within) chunks
        ++pos;
        continue;
      }
    }
    // The next line terminator (CR or LF) from pos: memchr for the LF every line has, then
    // for a CR before it (rare), instead of testing byte by byte.
    const std::size_t end = LineEnd(bytes, pos);
    const std::size_t piece = end - pos;
    if (line_.size() + piece > options_.max_line_bytes) {
      failed_ = Status::ProtocolError(
          "SSE line longer than " + std::to_string(options_.max_line_bytes) +
          " bytes (at stream byte " + std::to_string(bytes_seen_ + end) + ")");
      return failed_;
    }
    if (end == bytes.size()) {  // unterminated: keep for the next Feed
      line_.append(bytes.substr(pos, piece));
      break;
    }
    Status st;
    if (line_.empty()) {
      st = ProcessLine(bytes.substr(pos, piece), /*stable=*/true, sink, &stop);  // common case: no copy
    } else {
      line_.append(bytes.substr(pos, piece));
      st = ProcessLine(line_, /*stable=*/false, sink, &stop);
      line_.clear();
    }
    if (stop) {
      failed_ = Status::FailedPrecondition("SSE parser used after its consumer stopped");
      return Status::Ok();
    }
    if (!st.ok()) {
      failed_ = st.WithContext("at stream byte " + std::to_string(bytes_seen_ + end));
      return failed_;
    }
    last_was_cr_ = bytes[end] == '\r';
    pos = end + 1;
  }
  OwnData();  // the pending event outlives these bytes
  bytes_seen_ += bytes.size();
  return Status::Ok();
}

Status SseParser::FinishImpl(Sink sink) {
  if (!failed_.ok()) return failed_;
  bool stop = false;
  if (!line_.empty()) {
    Status st = ProcessLine(line_, /*stable=*/false, sink, &stop);
    line_.clear();
    if (!st.ok()) {
      failed_ = st;
      return failed_;
    }
  }
  if (has_data_) Dispatch(sink);
  return Status::Ok();
}

void SseParser::OwnData() {
  if (!data_in_input_) return;
  data_buf_.assign(data_);
  data_ = data_buf_;
  data_in_input_ = false;
}

Status SseParser::ProcessLine(std::string_view line, bool stable, Sink sink, bool* stop) {
  if (line.empty()) {  // blank line: end of event
    if (has_data_) {
      *stop = !Dispatch(sink);
    } else {
      event_.clear();  // an event without data is dropped (SSE spec)
      id_.clear();
    }
    return Status::Ok();
  }
  if (line.front() == ':') {  // comment (TGI keep-alive)
    ++comments_seen_;
    return Status::Ok();
  }
  std::string_view field = line;
  std::string_view value;
  if (std::size_t colon = line.find(':'); colon != std::string_view::npos) {
    field = line.substr(0, colon);
    value = line.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  }
  if (field == "data" || field == "error") {
    if (field == "error") is_error_field_ = true;
    const std::size_t extra = (has_data_ ? 1 : 0) + value.size();
    if (data_.size() + extra > options_.max_event_bytes) {
      return Status::ProtocolError("SSE event data larger than " +
                                   std::to_string(options_.max_event_bytes) + " bytes");
    }
    if (!has_data_ && stable) {  // the usual event: one data line, seen in place
      data_ = value;
      data_in_input_ = true;
    } else {
      OwnData();
      if (!has_data_) data_buf_.clear();
      if (has_data_) data_buf_.push_back('\n');
      data_buf_.append(value);
      data_ = data_buf_;
    }
    has_data_ = true;
  } else if (field == "event") {
    event_.assign(value);
  } else if (field == "id") {
    id_.assign(value);
  } else if (field == "retry") {
    // Reconnection delay: meaningless for a benchmark client.
  } else {
    ++ignored_lines_;
  }
  return Status::Ok();
}

bool SseParser::Dispatch(Sink sink) {
  const bool go_on = sink(SseEventView{event_, data_, id_, is_error_field_});
  event_.clear();
  id_.clear();
  data_ = {};
  data_in_input_ = false;
  is_error_field_ = false;
  has_data_ = false;
  return go_on;
}

}  // namespace infereng::client
