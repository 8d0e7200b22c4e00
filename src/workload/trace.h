// Trace replay input: JSONL, one request per line,
//   {"t": 12.5, "input_tokens": 812, "output_tokens": 143}
// `t` (or "timestamp") is seconds on any origin, non-decreasing; lengths are whole numbers
// >= 1. Other fields are ignored; blank lines are skipped. The reader streams (bounded
// memory); ScanTrace validates a whole file up front so bad lines fail before a run starts.
// Errors name FILE:LINE and what was wrong.
#pragma once

#include <cstdint>
#include <fstream>
#include <memory>
#include <optional>
#include <string>

#include "core/status.h"

namespace infereng::workload {

struct TraceEntry {
  double t_s = 0;
  int64_t input_tokens = 0;
  int64_t output_tokens = 0;
  int line = 0;
};

struct TraceStats {
  uint64_t count = 0;
  double first_t_s = 0, last_t_s = 0;
};

class TraceReader {
 public:
  static Result<TraceReader> Open(const std::string& path);
  // The next entry, nullopt at the end, or an error naming FILE:LINE.
  Result<std::optional<TraceEntry>> Next();

 private:
  TraceReader(std::string path, std::unique_ptr<std::ifstream> in) : path_(std::move(path)), in_(std::move(in)) {}
  std::string path_;
  std::unique_ptr<std::ifstream> in_;
  int line_ = 0;
  double last_t_ = -1e300;
};

// Reads and validates every line. Fails on an empty trace.
Result<TraceStats> ScanTrace(const std::string& path);

}  // namespace infereng::workload
