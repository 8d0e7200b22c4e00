// TraceReader: streams TraceRecords out of a request log, one line at a time (bounded
// memory whatever the file's size). One reader serves every format: a format is a column
// map (formats.h) over one of two line syntaxes, CSV with a header row or JSONL.
//
//   azure     CSV  TIMESTAMP (date-time), ContextTokens, GeneratedTokens
//   mooncake  JSONL timestamp (ms), input_length, output_length, hash_ids
//   burstgpt  CSV  Timestamp (s), Model, Request tokens, Response tokens, Total tokens, Log Type
//   csv/jsonl columns found by name (formats.cc lists the names) or given with --columns
//
// Lines must be in time order (equal times are fine): the statistics are one pass. CSV
// fields may be quoted ("a,b", "" for a quote) but not span lines; `\r\n` endings and a last
// line without a newline are accepted. Errors name FILE:LINE and the column.
#pragma once

#include <cstdint>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "trace/formats.h"
#include "trace/record.h"

namespace infereng::trace {

struct ReaderOptions {
  Format format = Format::kAuto;
  ColumnMap columns;  // non-empty entries override the format's (or auto-detected) names
  TimeUnit time_unit = TimeUnit::kAuto;
};

class TraceReader {
 public:
  static Result<std::unique_ptr<TraceReader>> Open(const std::string& path, const ReaderOptions& options);

  // Fills `out` with the next record; false at the end of the file; an error names FILE:LINE.
  Result<bool> Next(TraceRecord* out);

  const std::string& path() const { return path_; }
  Format format() const { return format_; }    // resolved (never kAuto)
  const ColumnMap& columns() const { return columns_; }  // resolved names ("" = absent)
  TimeUnit time_unit() const { return unit_; }  // resolved on the first record

 private:
  TraceReader() = default;
  Status Init(const ReaderOptions& options);
  Status ResolveCsvHeader(const std::string& header, const ReaderOptions& options);
  Status ResolveJsonKeys(const std::string& first_line, const ReaderOptions& options);
  Status ParseCsv(const std::string& line, TraceRecord* out);
  Status ParseJson(const std::string& line, TraceRecord* out);
  Status SetTime(const std::string& column, double number, const std::string* text, TraceRecord* out);
  std::string Where() const;
  bool ReadLine(std::string* line);

  std::string path_;
  std::unique_ptr<std::ifstream> in_;
  int64_t line_ = 0;
  Format format_ = Format::kAuto;
  ColumnMap columns_;
  TimeUnit unit_ = TimeUnit::kAuto;
  bool jsonl_ = false;
  std::string pending_;  // JSONL: the first line, read to detect keys, not yet returned
  bool has_pending_ = false;
  // CSV: index of each role's column in the header (-1 = absent) and the field count.
  int col_time_ = -1, col_input_ = -1, col_output_ = -1, col_tenant_ = -1, col_session_ = -1,
      col_hashes_ = -1, col_category_ = -1, col_items_ = -1;
  std::size_t fields_ = 0;
  std::vector<std::string> header_;
  std::vector<std::string> cells_;  // reused per line
  double last_t_ = -1e300;
};

}  // namespace infereng::trace
