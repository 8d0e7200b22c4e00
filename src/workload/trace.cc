// JSONL trace reading and validation.
#include "workload/trace.h"

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

namespace infereng::workload {
namespace {

constexpr std::size_t kMaxLineBytes = 1 << 20;

Result<int64_t> Length(const nlohmann::json& j, const char* key, const std::string& where) {
  auto it = j.find(key);
  if (it == j.end()) return Status::InvalidArgument(where + std::string("missing \"") + key + "\"");
  if (!it->is_number()) return Status::InvalidArgument(where + "\"" + key + "\": expected a whole number, got " + it->dump());
  const double v = it->get<double>();
  if (!(v >= 1) || v > 1e8 || std::floor(v) != v) {
    return Status::InvalidArgument(where + "\"" + key + "\": expected a whole number between 1 and 1e8, got " + it->dump());
  }
  return static_cast<int64_t>(v);
}

}  // namespace

Result<TraceReader> TraceReader::Open(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return Status::NotFound("cannot read trace file " + path);
  auto in = std::make_unique<std::ifstream>(path);
  if (!*in) return Status::NotFound("cannot open trace file " + path);
  return TraceReader(path, std::move(in));
}

Result<std::optional<TraceEntry>> TraceReader::Next() {
  std::string line;
  while (std::getline(*in_, line)) {
    ++line_;
    const std::string where = path_ + ":" + std::to_string(line_) + ": ";
    if (line.size() > kMaxLineBytes) return Status::InvalidArgument(where + "line longer than 1MiB");
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    auto j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) {
      return Status::InvalidArgument(where + "expected a JSON object like {\"t\": 1.5, \"input_tokens\": 512, \"output_tokens\": 128}");
    }
    auto t = j.find("t");
    if (t == j.end()) t = j.find("timestamp");
    if (t == j.end() || !t->is_number()) return Status::InvalidArgument(where + "expected a number \"t\" (seconds)");
    TraceEntry e;
    e.line = line_;
    e.t_s = t->get<double>();
    if (!std::isfinite(e.t_s)) return Status::InvalidArgument(where + "\"t\" is not finite");
    if (e.t_s < last_t_) {
      return Status::InvalidArgument(where + "\"t\" goes backwards (" + std::to_string(e.t_s) + " after " +
                                     std::to_string(last_t_) + "); sort the trace by time");
    }
    last_t_ = e.t_s;
    INFERENG_ASSIGN_OR_RETURN(e.input_tokens, Length(j, "input_tokens", where));
    INFERENG_ASSIGN_OR_RETURN(e.output_tokens, Length(j, "output_tokens", where));
    return std::optional<TraceEntry>(e);
  }
  if (in_->bad()) return Status::IoError(path_ + ": read error");
  return std::optional<TraceEntry>();
}

Result<TraceStats> ScanTrace(const std::string& path) {
  INFERENG_ASSIGN_OR_RETURN(TraceReader reader, TraceReader::Open(path));
  TraceStats stats;
  for (;;) {
    INFERENG_ASSIGN_OR_RETURN(std::optional<TraceEntry> e, reader.Next());
    if (!e) break;
    if (stats.count == 0) stats.first_t_s = e->t_s;
    stats.last_t_s = e->t_s;
    ++stats.count;
  }
  if (stats.count == 0) return Status::InvalidArgument(path + ": empty trace");
  return stats;
}

}  // namespace infereng::workload
