// SseParser implementation: see sse_parser.h for the framing rules and quirks.
#include "client/sse_parser.h"

#include <string>

namespace infereng::client {

SseParser::SseParser(SseParserOptions options) : options_(options) {}

Status SseParser::Feed(std::string_view bytes, std::vector<SseEvent>& out) {
  if (!failed_.ok()) return failed_;
  std::size_t pos = 0;
  while (pos < bytes.size()) {
    if (last_was_cr_) {
      last_was_cr_ = false;
      if (bytes[pos] == '\n') {  // the LF of a CRLF split across (or within) chunks
        ++pos;
        continue;
      }
    }
    // Find the next line terminator (CR or LF) from pos.
    std::size_t end = pos;
    while (end < bytes.size() && bytes[end] != '\n' && bytes[end] != '\r') ++end;
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
      st = ProcessLine(bytes.substr(pos, piece), out);  // common case: no copy
    } else {
      line_.append(bytes.substr(pos, piece));
      st = ProcessLine(line_, out);
      line_.clear();
    }
    if (!st.ok()) {
      failed_ = st.WithContext("at stream byte " + std::to_string(bytes_seen_ + end));
      return failed_;
    }
    last_was_cr_ = bytes[end] == '\r';
    pos = end + 1;
  }
  bytes_seen_ += bytes.size();
  return Status::Ok();
}

Status SseParser::Finish(std::vector<SseEvent>& out) {
  if (!failed_.ok()) return failed_;
  if (!line_.empty()) {
    Status st = ProcessLine(line_, out);
    line_.clear();
    if (!st.ok()) {
      failed_ = st;
      return failed_;
    }
  }
  if (has_data_) Dispatch(out);
  return Status::Ok();
}

Status SseParser::ProcessLine(std::string_view line, std::vector<SseEvent>& out) {
  if (line.empty()) {  // blank line: end of event
    if (has_data_) {
      Dispatch(out);
    } else {
      pending_.event.clear();  // an event without data is dropped (SSE spec)
      pending_.id.clear();
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
    if (field == "error") pending_.is_error_field = true;
    std::size_t extra = (has_data_ ? 1 : 0) + value.size();
    if (pending_.data.size() + extra > options_.max_event_bytes) {
      return Status::ProtocolError("SSE event data larger than " +
                                   std::to_string(options_.max_event_bytes) + " bytes");
    }
    if (has_data_) pending_.data.push_back('\n');
    pending_.data.append(value);
    has_data_ = true;
  } else if (field == "event") {
    pending_.event.assign(value);
  } else if (field == "id") {
    pending_.id.assign(value);
  } else if (field == "retry") {
    // Reconnection delay: meaningless for a benchmark client.
  } else {
    ++ignored_lines_;
  }
  return Status::Ok();
}

void SseParser::Dispatch(std::vector<SseEvent>& out) {
  out.push_back(std::move(pending_));
  pending_ = SseEvent{};
  has_data_ = false;
}

}  // namespace infereng::client
