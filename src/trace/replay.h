// Trace replay: which records of a production trace a run replays (a window on the trace's
// own clock, or its first N requests), read with the one TraceReader (reader.h) so every
// format `characterize` reads can be replayed, and what the window's prefix structure
// implies for a prefix cache (ScanReplay), computed with the same LRU block cache
// characterize uses (lru_blocks.h).
//
// Window: the trace's first arrival is its origin; `start_s` skips records before
// origin + start_s; `duration_s` keeps records before (origin + start_s) + duration_s;
// `requests` keeps at most that many. Replayed arrival times are offsets from the first
// record kept, divided by the speed-up (the generator does that, workload/generator.h).
//
// Implied prefix hit rate: the window's requests, in order, look up their hash_ids in an
// LRU cache of `cache_blocks` blocks (0 = unbounded: nothing is evicted) that starts
// empty; a request's hit tokens are min(leading cached blocks x block_tokens, its input
// tokens). The rate is hit tokens / input tokens, the figure an engine's prefix-cache
// counters report (vllm:prefix_cache_hits_total / queries_total) when the replay gives
// requests that share leading hash ids the same leading prompt tokens.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "core/status.h"
#include "trace/reader.h"

namespace infereng::trace {

struct ReplayWindow {
  double start_s = 0;     // skip this long after the trace's first arrival
  double duration_s = 0;  // then replay this long (0 = to the end)
  int64_t requests = 0;   // at most this many requests (0 = all)
};

struct ReplayOptions {
  ReaderOptions reader;
  ReplayWindow window;
  int64_t block_tokens = 0;  // tokens per hash_ids block; 0 = the format's (512: Mooncake)
  int64_t cache_blocks = 0;  // LRU capacity for the implied hit rate, in blocks (0 = unbounded)
};

// What ScanReplay found: the run's summary and manifest record it (job/).
struct ReplayInfo {
  std::string path, basename, format, sha256;
  ReplayWindow window;
  int64_t requests = 0;              // records in the window
  double first_t_s = 0, last_t_s = 0;  // trace-clock times of the first and last record kept
  int64_t skipped_before = 0;        // records before the window
  bool has_hashes = false;           // the window's records carry hash_ids
  int64_t block_tokens = 0;
  int64_t cache_blocks = 0;          // 0 = unbounded
  int64_t distinct_blocks = 0;
  int64_t input_tokens = 0, implied_hit_tokens = 0;
  double implied_hit_rate = 0;       // hit tokens / input tokens (0 without hash_ids)
  // Sessions: records in the window with a session id; without any, the conversations the
  // window's hash_ids imply (ConversationLinker over the window, from its first record),
  // which a replay with traffic.arrival.sessions uses as its sessions.
  int64_t session_records = 0;
  int64_t inferred_sessions = 0, inferred_follow_ups = 0;
};

// The tokens per hash_ids block of a format when not given (512 for every format today:
// Mooncake's block size; other formats have no hash_ids).
int64_t DefaultBlockTokens(Format format);

// Reads the whole trace once (every line is validated, so a bad line fails here with
// FILE:LINE before a run starts), selects the window and computes the implied hit rate.
// InvalidArgument when the window holds no request.
Result<ReplayInfo> ScanReplay(const std::string& path, const ReplayOptions& options);

// Streams the window's records (the reader re-validates each line: the file may change
// between the scan and the replay, and then the error says where).
class ReplaySource {
 public:
  static Result<ReplaySource> Open(const std::string& path, const ReplayOptions& options);
  // The next record in the window; false after its last.
  Result<bool> Next(TraceRecord* out);
  Format format() const { return reader_->format(); }

 private:
  ReplaySource(std::unique_ptr<TraceReader> reader, ReplayWindow window)
      : reader_(std::move(reader)), window_(window) {}
  std::unique_ptr<TraceReader> reader_;
  ReplayWindow window_;
  bool started_ = false, done_ = false;
  double origin_s_ = 0;
  int64_t yielded_ = 0;
};

// The "trace" block of a run's manifest and summary (docs/replay.md): the file (basename,
// format, sha256), the window, the speed-up, the requests, and the prefix structure with the
// implied hit rate and the cache capacity it assumed.
nlohmann::json ReplayInfoToJson(const ReplayInfo& info, double speedup);

// One line for the terminal and the summary's notes: what the replay's prefix structure is.
std::string ReplayPrefixNote(const ReplayInfo& info);
// "" when the window has session ids or no hash_ids; else how many conversations the
// hash_ids imply (what --trace-sessions replays).
std::string ReplaySessionNote(const ReplayInfo& info);

// The sha256 of a file's bytes, lowercase hex.
Result<std::string> Sha256OfFile(const std::string& path);

}  // namespace infereng::trace
