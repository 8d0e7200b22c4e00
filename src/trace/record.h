// TraceRecord: one request of a production trace, whatever file format it came from
// (Azure CSV, Mooncake JSONL, BurstGPT CSV, a generic CSV or JSONL with a column map).
// Every reader yields these; the statistics (characterization.h) and the card writer read
// only these, so a new format is a new reader and nothing else.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace infereng::trace {

struct TraceRecord {
  double t_s = 0;                 // arrival, seconds on the trace's own origin (epoch for datetimes)
  int64_t input_tokens = 0;       // prompt tokens (>= 0)
  int64_t output_tokens = 0;      // generated tokens (>= 0; 0 = failed or empty response)
  std::vector<uint64_t> hash_ids; // prefix block hashes (Mooncake): equal leading ids = shared prefix
  std::string tenant;             // tenant / user ("" = none)
  std::string session;            // session / conversation id ("" = none)
  std::string category;           // online/offline marker, e.g. BurstGPT "Log Type" ("" = none)
  int64_t items = 0;              // inputs in the request: an embeddings batch size (0 = not given)
  int64_t line = 0;               // 1-based line in the file, for error messages
};

}  // namespace infereng::trace
