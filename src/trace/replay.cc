// Trace replay: the window over a trace's records, its scan and the implied prefix hit rate.
#include "trace/replay.h"

#include <openssl/evp.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <unordered_set>
#include <vector>

#include "trace/conversation_linker.h"
#include "trace/lru_blocks.h"

namespace infereng::trace {
namespace {

Status CheckWindow(const ReplayWindow& w) {
  if (!(w.start_s >= 0) || !std::isfinite(w.start_s)) {
    return Status::InvalidArgument("--trace-start: must be >= 0 seconds");
  }
  if (!(w.duration_s >= 0) || !std::isfinite(w.duration_s)) {
    return Status::InvalidArgument("--trace-duration: must be >= 0 seconds");
  }
  if (w.requests < 0) return Status::InvalidArgument("--trace-requests: must be >= 0");
  return Status::Ok();
}

}  // namespace

int64_t DefaultBlockTokens(Format) { return 512; }

Result<ReplaySource> ReplaySource::Open(const std::string& path, const ReplayOptions& options) {
  INFERENG_RETURN_IF_ERROR(CheckWindow(options.window));
  INFERENG_ASSIGN_OR_RETURN(std::unique_ptr<TraceReader> reader, TraceReader::Open(path, options.reader));
  return ReplaySource(std::move(reader), options.window);
}

Result<bool> ReplaySource::Next(TraceRecord* out) {
  while (!done_) {
    INFERENG_ASSIGN_OR_RETURN(bool more, reader_->Next(out));
    if (!more) break;
    if (!started_) {
      origin_s_ = out->t_s;  // the trace's first arrival
      started_ = true;
    }
    const double offset = out->t_s - origin_s_;
    if (offset < window_.start_s) continue;
    if (window_.duration_s > 0 && offset >= window_.start_s + window_.duration_s) break;
    if (window_.requests > 0 && yielded_ >= window_.requests) break;
    ++yielded_;
    return true;
  }
  done_ = true;
  return false;
}

Result<ReplayInfo> ScanReplay(const std::string& path, const ReplayOptions& options) {
  INFERENG_ASSIGN_OR_RETURN(std::unique_ptr<TraceReader> reader, TraceReader::Open(path, options.reader));
  INFERENG_RETURN_IF_ERROR(CheckWindow(options.window));
  ReplayInfo info;
  info.path = path;
  info.basename = std::filesystem::path(path).filename().string();
  info.format = std::string(FormatName(reader->format()));
  info.window = options.window;
  info.block_tokens = options.block_tokens > 0 ? options.block_tokens : DefaultBlockTokens(reader->format());
  info.cache_blocks = options.cache_blocks;
  LruBlocks lru(options.cache_blocks > 0 ? options.cache_blocks : std::numeric_limits<int64_t>::max());
  std::unordered_set<uint64_t> distinct;
  ConversationLinker linker(info.block_tokens);
  const ReplayWindow& w = options.window;
  TraceRecord r;
  bool started = false, closed = false;
  double origin = 0;
  // Every line is read, inside the window or not: a bad line anywhere fails before the run.
  for (;;) {
    INFERENG_ASSIGN_OR_RETURN(bool more, reader->Next(&r));
    if (!more) break;
    if (!started) origin = r.t_s, started = true;
    const double offset = r.t_s - origin;
    if (closed) continue;
    if (offset < w.start_s) {
      ++info.skipped_before;
      continue;
    }
    if ((w.duration_s > 0 && offset >= w.start_s + w.duration_s) || (w.requests > 0 && info.requests >= w.requests)) {
      closed = true;
      continue;
    }
    if (info.requests == 0) info.first_t_s = r.t_s;
    info.last_t_s = r.t_s;
    ++info.requests;
    info.input_tokens += r.input_tokens;
    info.session_records += !r.session.empty();
    if (r.hash_ids.empty()) continue;
    linker.Link(r.hash_ids, r.input_tokens, r.t_s);
    info.has_hashes = true;
    const int64_t hits = lru.Access(r.hash_ids);
    info.implied_hit_tokens += std::min(hits * info.block_tokens, r.input_tokens);
    distinct.insert(r.hash_ids.begin(), r.hash_ids.end());
  }
  if (info.requests == 0) {
    return Status::InvalidArgument(path + ": the replay window holds no request (" +
                                   std::to_string(info.skipped_before) + " before --trace-start)");
  }
  info.distinct_blocks = static_cast<int64_t>(distinct.size());
  if (info.session_records == 0 && info.has_hashes) {
    info.inferred_sessions = linker.conversations();
    info.inferred_follow_ups = linker.follow_ups();
  }
  info.implied_hit_rate = info.input_tokens > 0 && info.has_hashes
                              ? static_cast<double>(info.implied_hit_tokens) / static_cast<double>(info.input_tokens)
                              : 0;
  INFERENG_ASSIGN_OR_RETURN(info.sha256, Sha256OfFile(path));
  return info;
}

nlohmann::json ReplayInfoToJson(const ReplayInfo& info, double speedup) {
  using nlohmann::json;
  json prefix = {{"hash_ids", info.has_hashes}};
  if (info.has_hashes) {
    prefix["block_tokens"] = info.block_tokens;
    prefix["distinct_blocks"] = info.distinct_blocks;
    prefix["input_tokens"] = info.input_tokens;
    prefix["implied_hit_tokens"] = info.implied_hit_tokens;
    prefix["implied_hit_rate"] = info.implied_hit_rate;
    prefix["cache_blocks"] = info.cache_blocks > 0 ? json(info.cache_blocks) : json("unbounded");
    prefix["rule"] = "LRU over the trace's hash_ids blocks, empty at the window's start; hit tokens / input tokens";
  } else {
    prefix["note"] = "no hash_ids: every prompt is unique (no prefix reuse)";
  }
  return {{"file", info.basename},
          {"format", info.format},
          {"sha256", info.sha256},
          {"window",
           {{"start_s", info.window.start_s},
            {"duration_s", info.window.duration_s > 0 ? json(info.window.duration_s) : json(nullptr)},
            {"requests", info.window.requests > 0 ? json(info.window.requests) : json(nullptr)}}},
          {"speedup", speedup},
          {"requests", info.requests},
          {"skipped_before", info.skipped_before},
          {"span_s", info.last_t_s - info.first_t_s},
          {"prefix", prefix},
          {"sessions", info.session_records > 0 ? json{{"source", "ids"}, {"records", info.session_records}}
                       : info.has_hashes
                           ? json{{"source", "inferred"},
                                  {"sessions", info.inferred_sessions},
                                  {"follow_ups", info.inferred_follow_ups},
                                  {"rule", "conversations from hash_ids (docs/replay.md): used only with "
                                           "traffic.arrival.sessions"}}
                           : json(nullptr)}};
}

std::string ReplayPrefixNote(const ReplayInfo& info) {
  if (!info.has_hashes) {
    return "trace " + info.basename + " has no hash_ids: every replayed prompt is unique (no prefix reuse)";
  }
  char rate[32];
  std::snprintf(rate, sizeof rate, "%.1f%%", 100 * info.implied_hit_rate);
  return "trace " + info.basename + ": its hash_ids imply a prefix-cache hit rate of " + rate + " (" +
         std::to_string(info.requests) + " requests, LRU over " + std::to_string(info.block_tokens) + "-token blocks, " +
         (info.cache_blocks > 0 ? std::to_string(info.cache_blocks) + " blocks" : std::string("unbounded")) +
         " cache, empty at the start)";
}

std::string ReplaySessionNote(const ReplayInfo& info) {
  if (info.session_records > 0 || !info.has_hashes) return "";
  return "trace " + info.basename + " has no session ids: its hash_ids imply " + std::to_string(info.inferred_sessions) +
         " conversations (" + std::to_string(info.inferred_follow_ups) + " of " + std::to_string(info.requests) +
         " requests continue an earlier one), replayed as sessions with traffic.arrival.sessions";
}

Result<std::string> Sha256OfFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IoError(path + ": cannot open");
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1) return Status::Internal("sha256 init failed");
  std::vector<char> buf(1 << 16);
  while (in.read(buf.data(), static_cast<std::streamsize>(buf.size())) || in.gcount() > 0) {
    EVP_DigestUpdate(ctx.get(), buf.data(), static_cast<std::size_t>(in.gcount()));
  }
  if (in.bad()) return Status::IoError(path + ": read error");
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_DigestFinal_ex(ctx.get(), digest, &len);
  std::string hex;
  char b[3];
  for (unsigned int i = 0; i < len; ++i) {
    std::snprintf(b, sizeof b, "%02x", digest[i]);
    hex += b;
  }
  return hex;
}

}  // namespace infereng::trace
