#include "job/calibrate_runs.h"

#include <algorithm>
#include <filesystem>

#include "metrics/records_io.h"

namespace infereng::job {

std::vector<twin::ProfilePoint> PointsFromRecords(const std::vector<metrics::RequestRecord>& records) {
  struct Span {
    Nanos send, first, last, end;
    int64_t prompt, out;
  };
  std::vector<Span> spans;
  for (const metrics::RequestRecord& r : records) {
    if (!r.ok() || r.chunks.empty() || r.t_send < 0 || r.t_end < 0) continue;
    spans.push_back({r.t_send, r.chunks.front().t, r.chunks.back().t, r.t_end,
                     std::max<int64_t>(1, r.prompt_tokens > 0 ? r.prompt_tokens : r.input_tokens_target), r.OutputTokens()});
  }
  std::vector<twin::ProfilePoint> out;
  for (const Span& s : spans) {
    const bool idle = std::none_of(spans.begin(), spans.end(), [&](const Span& o) {
      return &o != &s && o.send < s.send && o.end > s.send;
    });
    if (idle) out.push_back({"prefill", s.prompt, 0, 1, static_cast<double>(s.first - s.send) / 1e9, 1});
    if (s.out < 2 || s.last <= s.first) continue;
    const Nanos mid = s.first + (s.last - s.first) / 2;
    int32_t batch = 0;
    int64_t held = 0;
    for (const Span& o : spans) {
      if (o.first <= mid && mid <= o.last) {
        ++batch;
        held += o.prompt + o.out / 2;
      }
    }
    const double step = static_cast<double>(s.last - s.first) / 1e9 / static_cast<double>(s.out - 1);
    out.push_back({batch == 1 ? "decode_context" : "decode_batch", batch, held, batch, step, 1});
  }
  return out;
}

Result<std::vector<twin::ProfilePoint>> PointsFromRunDir(const std::string& dir) {
  // A run directory's records are requests.jsonl (run, bench); records.jsonl is the name
  // `simulate --records` users often give theirs.
  std::string path;
  std::error_code ec;
  for (const char* name : {"requests.jsonl", "records.jsonl"}) {
    const std::string p = (std::filesystem::path(dir) / name).string();
    if (std::filesystem::exists(p, ec)) {
      path = p;
      break;
    }
  }
  if (path.empty()) return Status::NotFound(dir + ": no requests.jsonl (not a run directory)");
  INFERENG_ASSIGN_OR_RETURN(auto records, metrics::ReadRecordsFile(path));
  return PointsFromRecords(records);
}

}  // namespace infereng::job
