// records.jsonl: the raw RequestRecords of a run, one JSON object per finished request.
//
// Format (docs/results-schema.md, "records.jsonl"): every time is written in milliseconds
// relative to the run's t0 (a JSON number, shortest round-trip form, so nanoseconds come
// back exactly), `null` for "did not happen"; chunks are [t_ms, tokens] or
// [t_ms, tokens, 1] when the chunk carried reasoning only. Reading gives records on a clock
// whose origin is t0 = 0.
//
// RecordWriter writes on an O_APPEND descriptor: Write() puts one line out with one
// write(2), so a crash of the process keeps every completed line; Buffer() + Flush() put a
// batch of lines out with one write(2) (the record pipeline flushes after each batch it
// drains, so a crash loses at most the lines of the batch being written). Lines are
// formatted by AppendRecordJson (record_json_writer.h: the bytes RecordToJson's dump gives,
// without building a tree). Thread-safe (one mutex around the buffer and the write).
// The reader reports bad lines as "path:LINE: what was wrong" and never skips them silently:
// strict reading stops there; lenient reading (`report`) skips them and counts them in
// SkippedLines, which the caller must show.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/clock.h"
#include "core/status.h"
#include "metrics/record.h"

namespace infereng::metrics {

// One record as a JSON object with times relative to t0 (ms).
nlohmann::json RecordToJson(const RequestRecord& record, Nanos t0);
// The inverse: times come back as nanoseconds since t0 (t0 = 0). Errors name the field.
Result<RequestRecord> RecordFromJson(const nlohmann::json& j);

class RecordWriter {
 public:
  // Creates (truncates) `path`. `t0` is subtracted from every time written.
  static Result<std::unique_ptr<RecordWriter>> Open(const std::string& path, Nanos t0);
  ~RecordWriter();
  RecordWriter(const RecordWriter&) = delete;
  RecordWriter& operator=(const RecordWriter&) = delete;

  // Appends one line now (with anything buffered before it). Thread-safe.
  Status Write(const RequestRecord& record);
  // Formats one line into the writer's buffer; it reaches the file at the next Flush,
  // Write or Close (or here, once the buffer holds kFlushBytes). Thread-safe.
  Status Buffer(const RequestRecord& record);
  // Writes every buffered line with one write(2). Thread-safe.
  Status Flush();
  // Flushes, then closes the file; later writes fail. Idempotent. Also done by the destructor.
  Status Close();

  static constexpr std::size_t kFlushBytes = 1 << 20;  // bounds the buffer of a long batch

  int64_t written() const;
  const std::string& path() const { return path_; }

 private:
  RecordWriter(std::string path, int fd, Nanos t0);
  Status FlushLocked();

  std::string path_;
  Nanos t0_;
  mutable std::mutex mu_;
  int fd_;             // guarded by mu_; -1 once closed
  int64_t written_;    // guarded by mu_: lines that reached the file
  std::string buf_;    // guarded by mu_: formatted lines not yet written
  int64_t buffered_ = 0;  // guarded by mu_: lines in buf_
};

// Lines a lenient read skipped: how many, and what was wrong with the first few.
struct SkippedLines {
  static constexpr std::size_t kListed = 3;  // lines described in `first`
  int64_t count = 0;
  std::vector<std::string> first;            // "line 17: not valid JSON", at most kListed

  // "skipped 2 malformed lines in PATH (line 17: not valid JSON; line 20: id: expected an
  // integer)"; "" when nothing was skipped.
  std::string Describe(const std::string& path) const;
};

// Calls `fn` for each record of the file in order; stops at the first non-ok Status from
// `fn`. A bad line (not JSON, or a bad field) with `skipped` null stops the read with
// InvalidArgument "path:LINE: what was wrong"; with `skipped` set it is skipped and counted
// there, and the read goes on. Blank lines are allowed.
Status ForEachRecordInFile(const std::string& path,
                           const std::function<Status(RequestRecord&&)>& fn,
                           SkippedLines* skipped = nullptr);

// Reads every record of `path` (times relative to t0 = 0).
Result<std::vector<RequestRecord>> ReadRecordsFile(const std::string& path);

}  // namespace infereng::metrics
