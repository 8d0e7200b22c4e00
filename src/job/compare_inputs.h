// RunInputs: what `compare` (and later `history check`, `canary`) needs from one run: the
// summary, the manifest, the quality check, and the per-request values of the in-window
// requests the summary's distributions and rates were computed from, kept as resampling
// units (metrics/bootstrap.h).
//
// LoadRunInputs reads a run directory through the one set of readers (requests.jsonl via
// metrics/records_io, summary.json via metrics::ReadSummaryFile and job's summary extras,
// manifest.json) and is strict: a malformed line or a missing summary is an error naming
// the file and line, never a comparison over part of the data. RunInputsFromRecords builds
// the same from records in memory (a canary holds them already).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/status.h"
#include "job/summary_extras.h"
#include "metrics/bootstrap.h"
#include "metrics/record.h"
#include "metrics/summary.h"

namespace infereng::job {

// The latency distributions compare resamples, by summary key, in report order.
inline constexpr const char* kCompareLatencyKeys[] = {"ttft_ms", "itl_ms", "tpot_ms", "e2e_ms",
                                                       "ttft_incl_queue_ms", "e2e_incl_queue_ms"};

struct RunInputs {
  std::string dir;                 // "" when built in memory
  std::string label;               // "A" / "B" or the directory's name, for messages
  metrics::Summary summary;
  nlohmann::json manifest;         // null when the run has none
  std::optional<metrics::QualityReport> quality;
  // Summary key ("ttft_ms", "itl_ms", ...) -> per-request values of successful in-window
  // requests (ITL: one unit per request holding its token-expanded gaps).
  std::map<std::string, metrics::UnitSample> latency;
  // Per in-window request (interrupted ones left out, as the summary does): its
  // contribution to the rates. ok: 1 if it succeeded; good: 1 if it met every per-request
  // threshold and passed quality; tokens: its output tokens when it succeeded, else 0.
  metrics::UnitSample ok, good, tokens;
  bool has_records = false;        // false: summary only (no intervals)
  std::vector<std::string> notes;  // which trial was read, ...
};

// Reads DIR/requests.jsonl (or records.jsonl, or trial-1/ of a --trials run, as its summary
// is trial 1's), DIR/summary.json (required) and DIR/manifest.json (optional).
Result<RunInputs> LoadRunInputs(const std::string& dir);

// The same from records in memory (times relative to the summary's t0 = 0).
RunInputs RunInputsFromRecords(metrics::Summary summary, const std::vector<metrics::RequestRecord>& records,
                               nlohmann::json manifest = nullptr);

}  // namespace infereng::job
