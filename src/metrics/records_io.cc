#include "metrics/records_io.h"

#include "metrics/record_json_writer.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <limits>
#include <unistd.h>

namespace infereng::metrics {
namespace {

using nlohmann::json;

// |ms| small enough that ms * 1e6 fits a Nanos (about 290 years).
bool InNanosRange(double ms) { return std::isfinite(ms) && std::abs(ms) < 9.0e12; }

json TimeMs(Nanos t, Nanos t0) {
  if (t < 0) return nullptr;
  return static_cast<double>(t - t0) / 1e6;
}

// Reads an optional time in ms relative to t0 back into nanoseconds (-1 for null/absent).
Status ReadTime(const json& j, const char* key, Nanos* out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) {
    *out = -1;
    return Status::Ok();
  }
  if (!it->is_number()) return Status::InvalidArgument(std::string(key) + ": expected a number of ms or null");
  const double ms = it->get<double>();
  if (!InNanosRange(ms)) return Status::InvalidArgument(std::string(key) + ": time out of range");
  *out = std::llround(ms * 1e6);
  return Status::Ok();
}

// Integers are range-checked against the field's type: no silent wrap-around.
template <typename T>
Status ReadInt(const json& j, const char* key, T* out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return Status::Ok();
  if (!it->is_number_integer()) return Status::InvalidArgument(std::string(key) + ": expected an integer");
  if (it->is_number_unsigned()) {
    const uint64_t v = it->get<uint64_t>();
    if (v > static_cast<uint64_t>(std::numeric_limits<T>::max())) {
      return Status::InvalidArgument(std::string(key) + ": " + std::to_string(v) + " is too large");
    }
    *out = static_cast<T>(v);
    return Status::Ok();
  }
  const int64_t v = it->get<int64_t>();
  if (v < static_cast<int64_t>(std::numeric_limits<T>::min()) ||
      (v > 0 && static_cast<uint64_t>(v) > static_cast<uint64_t>(std::numeric_limits<T>::max()))) {
    return Status::InvalidArgument(std::string(key) + ": " + std::to_string(v) + " is out of range");
  }
  *out = static_cast<T>(v);
  return Status::Ok();
}

Status ReadString(const json& j, const char* key, std::string* out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return Status::Ok();
  if (!it->is_string()) return Status::InvalidArgument(std::string(key) + ": expected a string");
  *out = it->get<std::string>();
  return Status::Ok();
}

}  // namespace

json RecordToJson(const RequestRecord& r, Nanos t0) {
  json chunks = json::array();
  for (const Chunk& c : r.chunks) {
    json e = json::array({static_cast<double>(c.t - t0) / 1e6, c.tokens});
    if (c.reasoning) e.push_back(1);
    chunks.push_back(std::move(e));
  }
  auto opt = [](int64_t v) { return v < 0 ? json(nullptr) : json(v); };
  json j{{"id", r.id},
              {"tenant", r.tenant},
              {"replica", r.replica},
              {"cold", r.cold},
              {"t_sched_ms", TimeMs(r.t_sched, t0)},
              {"t_send_ms", TimeMs(r.t_send, t0)},
              {"t_first_byte_ms", TimeMs(r.t_first_byte, t0)},
              {"t_end_ms", TimeMs(r.t_end, t0)},
              {"t_server_scheduled_ms", TimeMs(r.t_server_scheduled, t0)},
              {"t_prefill_done_ms", TimeMs(r.t_prefill_done, t0)},
              {"server_queue_ms", TimeMs(r.server_queue, 0)},
              {"server_prefill_ms", TimeMs(r.server_prefill, 0)},
              {"server_decode_ms", TimeMs(r.server_decode, 0)},
              {"server_timings_malformed", r.server_timings_malformed},
              {"input_tokens_target", r.input_tokens_target},
              {"output_tokens_target", r.output_tokens_target},
              {"prompt_tokens", opt(r.prompt_tokens)},
              {"completion_tokens", opt(r.completion_tokens)},
              {"cached_tokens", opt(r.cached_tokens)},
              {"token_source", TokenSourceName(r.token_source)},
              {"http_status", r.http_status},
              {"error", ErrorClassName(r.error)},
              {"error_message", r.error_message},
              {"finish_reason", r.finish_reason},
              {"retries", r.retries},
              {"retry_cause", r.retry_cause},
              {"retry_lost_ms", static_cast<double>(r.retry_lost) / 1e6},
              {"quality_pass", r.quality_pass < 0 ? json(nullptr) : json(r.quality_pass == 1)},
              {"chunks", std::move(chunks)}};
  if (r.reasoning_tokens >= 0) j["reasoning_tokens"] = r.reasoning_tokens;  // only when reported
  if (r.session >= 0) {  // only session/task calls carry these (older readers ignore them)
    j["session"] = r.session;
    j["turn"] = r.turn;
    j["turns"] = r.turns;
    if (r.calls > r.turns) {  // parallel calls in the session (older readers ignore these)
      j["branch"] = r.branch;
      j["branches"] = r.branches;
      j["calls"] = r.calls;
    }
  }
  if (r.items > 0) j["items"] = r.items;  // embeddings requests only (older readers ignore it)
  if (r.query_tokens > 0) j["query_tokens"] = r.query_tokens;  // rerank requests only
  if (r.images > 0) {  // requests with images only, so text-only runs' files are unchanged
    j["images"] = r.images;
    j["image_tokens"] = r.image_tokens;
  }
  if (r.audio_ms > 0) {  // transcription requests only
    j["audio_ms"] = r.audio_ms;
    j["audio_tokens"] = r.audio_tokens;
  }
  return j;
}

Result<RequestRecord> RecordFromJson(const json& j) {
  if (!j.is_object()) return Status::InvalidArgument("expected a JSON object");
  RequestRecord r;
  INFERENG_RETURN_IF_ERROR(ReadInt(j, "id", &r.id));
  INFERENG_RETURN_IF_ERROR(ReadInt(j, "tenant", &r.tenant));
  INFERENG_RETURN_IF_ERROR(ReadInt(j, "replica", &r.replica));
  if (auto it = j.find("cold"); it != j.end() && !it->is_null()) {
    if (!it->is_boolean()) return Status::InvalidArgument("cold: expected true or false");
    r.cold = it->get<bool>();
  }
  INFERENG_RETURN_IF_ERROR(ReadTime(j, "t_sched_ms", &r.t_sched));
  INFERENG_RETURN_IF_ERROR(ReadTime(j, "t_send_ms", &r.t_send));
  INFERENG_RETURN_IF_ERROR(ReadTime(j, "t_first_byte_ms", &r.t_first_byte));
  INFERENG_RETURN_IF_ERROR(ReadTime(j, "t_end_ms", &r.t_end));
  INFERENG_RETURN_IF_ERROR(ReadTime(j, "t_server_scheduled_ms", &r.t_server_scheduled));
  INFERENG_RETURN_IF_ERROR(ReadTime(j, "t_prefill_done_ms", &r.t_prefill_done));
  // Durations as the server reported them (absent in files from before they existed).
  INFERENG_RETURN_IF_ERROR(ReadTime(j, "server_queue_ms", &r.server_queue));
  INFERENG_RETURN_IF_ERROR(ReadTime(j, "server_prefill_ms", &r.server_prefill));
  INFERENG_RETURN_IF_ERROR(ReadTime(j, "server_decode_ms", &r.server_decode));
  for (Nanos* d : {&r.server_queue, &r.server_prefill, &r.server_decode}) {
    if (*d < 0) *d = -1;  // a negative duration is no duration
  }
  if (auto it = j.find("server_timings_malformed"); it != j.end() && !it->is_null()) {
    if (!it->is_boolean()) return Status::InvalidArgument("server_timings_malformed: expected true or false");
    r.server_timings_malformed = it->get<bool>();
  }
  INFERENG_RETURN_IF_ERROR(ReadInt(j, "input_tokens_target", &r.input_tokens_target));
  INFERENG_RETURN_IF_ERROR(ReadInt(j, "output_tokens_target", &r.output_tokens_target));
  INFERENG_RETURN_IF_ERROR(ReadInt(j, "prompt_tokens", &r.prompt_tokens));
  INFERENG_RETURN_IF_ERROR(ReadInt(j, "completion_tokens", &r.completion_tokens));
  INFERENG_RETURN_IF_ERROR(ReadInt(j, "cached_tokens", &r.cached_tokens));
  INFERENG_RETURN_IF_ERROR(ReadInt(j, "reasoning_tokens", &r.reasoning_tokens));
  if (r.reasoning_tokens < 0) r.reasoning_tokens = -1;  // not reported
  std::string name;
  INFERENG_RETURN_IF_ERROR(ReadString(j, "token_source", &name));
  if (!name.empty()) {
    auto ts = ParseTokenSource(name);
    if (!ts) return Status::InvalidArgument("token_source: unknown value \"" + name + "\"");
    r.token_source = *ts;
  }
  INFERENG_RETURN_IF_ERROR(ReadInt(j, "http_status", &r.http_status));
  name.clear();
  INFERENG_RETURN_IF_ERROR(ReadString(j, "error", &name));
  if (!name.empty()) {
    auto e = ParseErrorClass(name);
    if (!e) return Status::InvalidArgument("error: unknown error class \"" + name + "\"");
    r.error = *e;
  }
  INFERENG_RETURN_IF_ERROR(ReadString(j, "error_message", &r.error_message));
  INFERENG_RETURN_IF_ERROR(ReadString(j, "finish_reason", &r.finish_reason));
  INFERENG_RETURN_IF_ERROR(ReadInt(j, "retries", &r.retries));
  INFERENG_RETURN_IF_ERROR(ReadString(j, "retry_cause", &r.retry_cause));
  INFERENG_RETURN_IF_ERROR(ReadTime(j, "retry_lost_ms", &r.retry_lost));
  if (r.retry_lost < 0) r.retry_lost = 0;
  if (auto it = j.find("quality_pass"); it != j.end() && !it->is_null()) {
    if (!it->is_boolean()) return Status::InvalidArgument("quality_pass: expected true, false or null");
    r.quality_pass = it->get<bool>() ? 1 : 0;
  }
  INFERENG_RETURN_IF_ERROR(ReadInt(j, "session", &r.session));
  INFERENG_RETURN_IF_ERROR(ReadInt(j, "turn", &r.turn));
  INFERENG_RETURN_IF_ERROR(ReadInt(j, "turns", &r.turns));
  if (r.session < -1 || r.turn < 0 || r.turns < 1 || r.turn >= r.turns) {
    return Status::InvalidArgument("session/turn/turns: expected session >= 0 and 0 <= turn < turns");
  }
  // Parallel calls; absent: one call per step (calls = turns).
  r.calls = r.turns;
  INFERENG_RETURN_IF_ERROR(ReadInt(j, "branch", &r.branch));
  INFERENG_RETURN_IF_ERROR(ReadInt(j, "branches", &r.branches));
  INFERENG_RETURN_IF_ERROR(ReadInt(j, "calls", &r.calls));
  if (r.branches < 1 || r.branch < 0 || r.branch >= r.branches || r.calls < r.turns) {
    return Status::InvalidArgument("branch/branches/calls: expected 0 <= branch < branches and calls >= turns");
  }
  INFERENG_RETURN_IF_ERROR(ReadInt(j, "items", &r.items));
  if (r.items < 0) return Status::InvalidArgument("items: expected an integer >= 0");
  INFERENG_RETURN_IF_ERROR(ReadInt(j, "query_tokens", &r.query_tokens));
  if (r.query_tokens < 0) return Status::InvalidArgument("query_tokens: expected an integer >= 0");
  INFERENG_RETURN_IF_ERROR(ReadInt(j, "images", &r.images));
  INFERENG_RETURN_IF_ERROR(ReadInt(j, "image_tokens", &r.image_tokens));
  if (r.images < 0 || r.image_tokens < 0) return Status::InvalidArgument("images/image_tokens: expected integers >= 0");
  INFERENG_RETURN_IF_ERROR(ReadInt(j, "audio_ms", &r.audio_ms));
  INFERENG_RETURN_IF_ERROR(ReadInt(j, "audio_tokens", &r.audio_tokens));
  if (r.audio_ms < 0 || r.audio_tokens < 0) return Status::InvalidArgument("audio_ms/audio_tokens: expected integers >= 0");
  if (auto it = j.find("chunks"); it != j.end() && !it->is_null()) {
    if (!it->is_array()) return Status::InvalidArgument("chunks: expected an array");
    r.chunks.reserve(it->size());
    for (size_t i = 0; i < it->size(); ++i) {
      const json& c = (*it)[i];
      const std::string where = "chunks[" + std::to_string(i) + "]";
      if (!c.is_array() || c.size() < 2 || c.size() > 3 || !c[0].is_number() ||
          !c[1].is_number_integer() || (c.size() == 3 && !c[2].is_number_integer())) {
        return Status::InvalidArgument(where + ": expected [t_ms, tokens] or [t_ms, tokens, 1]");
      }
      const double ms = c[0].get<double>();
      if (!InNanosRange(ms)) return Status::InvalidArgument(where + ": time out of range");
      Chunk ch;
      ch.t = std::llround(ms * 1e6);
      const int64_t tokens = c[1].get<int64_t>();
      if (tokens < 0 || tokens > std::numeric_limits<int32_t>::max()) {
        return Status::InvalidArgument(where + ": token count out of range");
      }
      ch.tokens = static_cast<int32_t>(tokens);
      ch.reasoning = c.size() == 3 && c[2].get<int64_t>() != 0;
      if (!r.chunks.empty() && ch.t < r.chunks.back().t) {
        return Status::InvalidArgument(where + ": time goes backwards");
      }
      r.chunks.push_back(ch);
    }
  }
  return r;
}

RecordWriter::RecordWriter(std::string path, int fd, Nanos t0)
    : path_(std::move(path)), t0_(t0), fd_(fd), written_(0) {}

Result<std::unique_ptr<RecordWriter>> RecordWriter::Open(const std::string& path, Nanos t0) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return Status::IoError(path + ": cannot open for writing: " + std::strerror(errno));
  return std::unique_ptr<RecordWriter>(new RecordWriter(path, fd, t0));
}

RecordWriter::~RecordWriter() { (void)Close(); }

Status RecordWriter::Write(const RequestRecord& record) {
  INFERENG_RETURN_IF_ERROR(Buffer(record));
  return Flush();
}

Status RecordWriter::Buffer(const RequestRecord& record) {
  std::lock_guard<std::mutex> lock(mu_);
  if (fd_ < 0) return Status::FailedPrecondition(path_ + ": writer is closed");
  AppendRecordJson(buf_, record, t0_);
  buf_.push_back('\n');
  ++buffered_;
  return buf_.size() >= kFlushBytes ? FlushLocked() : Status::Ok();
}

Status RecordWriter::Flush() {
  std::lock_guard<std::mutex> lock(mu_);
  if (fd_ < 0) return Status::FailedPrecondition(path_ + ": writer is closed");
  return FlushLocked();
}

Status RecordWriter::FlushLocked() {
  size_t off = 0;
  while (off < buf_.size()) {
    const ssize_t n = ::write(fd_, buf_.data() + off, buf_.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      buf_.erase(0, off);  // what reached the file is not written twice
      return Status::IoError(path_ + ": write failed: " + std::strerror(errno));
    }
    off += static_cast<size_t>(n);
  }
  buf_.clear();  // keeps its capacity for the next batch
  written_ += buffered_;
  buffered_ = 0;
  return Status::Ok();
}

Status RecordWriter::Close() {
  std::lock_guard<std::mutex> lock(mu_);
  if (fd_ < 0) return Status::Ok();
  Status flushed = FlushLocked();
  const int rc = ::close(fd_);
  fd_ = -1;
  if (!flushed.ok()) return flushed;
  if (rc != 0) return Status::IoError(path_ + ": close failed: " + std::strerror(errno));
  return Status::Ok();
}

int64_t RecordWriter::written() const {
  std::lock_guard<std::mutex> lock(mu_);
  return written_;
}

std::string SkippedLines::Describe(const std::string& path) const {
  if (count == 0) return "";
  std::string out = "skipped " + std::to_string(count) + (count == 1 ? " malformed line in " : " malformed lines in ") +
                    path + " (";
  for (std::size_t i = 0; i < first.size(); ++i) out += (i > 0 ? "; " : "") + first[i];
  if (count > static_cast<int64_t>(first.size())) out += "; ...";
  return out + ")";
}

Status ForEachRecordInFile(const std::string& path,
                           const std::function<Status(RequestRecord&&)>& fn,
                           SkippedLines* skipped) {
  std::ifstream in(path);
  if (!in) return Status::NotFound(path + ": cannot open");
  std::string line;
  int64_t lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
    Result<RequestRecord> r = j.is_discarded() ? Result<RequestRecord>(Status::InvalidArgument("not valid JSON"))
                                               : RecordFromJson(j);
    if (!r.ok()) {
      if (skipped == nullptr) {
        return Status::InvalidArgument(path + ":" + std::to_string(lineno) + ": " + r.status().message());
      }
      if (skipped->first.size() < SkippedLines::kListed) {
        skipped->first.push_back("line " + std::to_string(lineno) + ": " + r.status().message());
      }
      ++skipped->count;
      continue;
    }
    INFERENG_RETURN_IF_ERROR(fn(std::move(r).value()));
  }
  if (in.bad()) return Status::IoError(path + ": read failed");
  return Status::Ok();
}

Result<std::vector<RequestRecord>> ReadRecordsFile(const std::string& path) {
  std::vector<RequestRecord> out;
  INFERENG_RETURN_IF_ERROR(ForEachRecordInFile(path, [&out](RequestRecord&& r) {
    out.push_back(std::move(r));
    return Status::Ok();
  }));
  return out;
}

}  // namespace infereng::metrics
