#include "job/merge.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <unordered_map>

#include "bench/shard.h"
#include "card/card_parser.h"
#include "job/manifest.h"
#include "metrics/records_io.h"
#include "metrics/summary_json.h"

namespace infereng::job {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

struct ShardRun {
  std::string dir;
  json manifest;
  json shard;  // manifest["shard"]
  int k = 0;
};

Result<ShardRun> ReadShard(const std::string& dir) {
  const fs::path path = fs::path(dir) / "manifest.json";
  std::ifstream in(path);
  if (!in) return Status::NotFound(dir + ": no manifest.json (not a run directory)");
  ShardRun r;
  r.dir = dir;
  r.manifest = json::parse(in, nullptr, false);
  if (r.manifest.is_discarded() || !r.manifest.is_object()) {
    return Status::InvalidArgument(path.string() + ": not a JSON object");
  }
  if (!r.manifest.contains("shard") || !r.manifest["shard"].is_object()) {
    return Status::InvalidArgument(dir + ": not a shard (manifest.json has no \"shard\"; run bench --shard K/N)");
  }
  r.shard = r.manifest["shard"];
  if (!r.shard.contains("t0_unix_ns")) {
    return Status::InvalidArgument(dir + ": the shard did not finish a trial (manifest.json shard.t0_unix_ns missing)");
  }
  for (const char* key : {"k", "n", "warmup_ns", "t0_unix_ns", "window_end_ns"}) {
    if (!r.shard.contains(key) || !r.shard[key].is_number_integer()) {
      return Status::InvalidArgument(path.string() + ": shard." + key + ": expected an integer");
    }
  }
  r.k = r.shard["k"].get<int>();
  return r;
}

// A shard's measured clock offset to the shared reference (bench/clock_sync.h): shard.clock.
struct MeasuredClock {
  std::string reference;
  double offset_ms = 0, uncertainty_ms = 0;
};

Result<std::optional<MeasuredClock>> ClockOf(const ShardRun& s) {
  if (!s.shard.contains("clock") || s.shard["clock"].is_null()) return std::optional<MeasuredClock>();
  const json& c = s.shard["clock"];
  if (!c.is_object() || !c.contains("offset_ms") || !c["offset_ms"].is_number() || !c.contains("uncertainty_ms") ||
      !c["uncertainty_ms"].is_number() || c["uncertainty_ms"].get<double>() < 0) {
    return Status::InvalidArgument(s.dir + "/manifest.json: shard.clock: expected {\"offset_ms\": number, "
                                   "\"uncertainty_ms\": number >= 0, \"reference\": URL}");
  }
  return std::optional<MeasuredClock>(MeasuredClock{.reference = c.value("reference", std::string()),
                                                    .offset_ms = c["offset_ms"].get<double>(),
                                                    .uncertainty_ms = c["uncertainty_ms"].get<double>()});
}

// Every time of `r` (all relative to its shard's t0) moved by `d`; unset times (-1) stay.
void ShiftRecord(metrics::RequestRecord& r, Nanos d) {
  for (Nanos* t : {&r.t_sched, &r.t_send, &r.t_first_byte, &r.t_end, &r.t_server_scheduled, &r.t_prefill_done}) {
    if (*t >= 0) *t += d;
  }
  for (metrics::Chunk& c : r.chunks) c.t += d;
}

std::string At(const json& j, const char* pointer) {
  const json::json_pointer p(pointer);
  return j.contains(p) ? j.at(p).dump() : "null";
}

// Same card, seed, load, N and start; distinct K; none missing.
Status CheckTogether(const std::vector<ShardRun>& shards) {
  const ShardRun& a = shards.front();
  const int n = a.shard["n"].get<int>();
  for (const ShardRun& b : shards) {
    for (const char* p : {"/card/sha256", "/seed", "/load", "/shard/n", "/shard/start_at_unix_ns", "/target"}) {
      if (At(a.manifest, p) != At(b.manifest, p)) {
        return Status::InvalidArgument("shards do not belong together: " + std::string(p + 1) + " is " +
                                       At(a.manifest, p) + " in " + a.dir + " but " + At(b.manifest, p) + " in " + b.dir);
      }
    }
  }
  std::map<int, std::string> seen;
  for (const ShardRun& s : shards) {
    if (s.k < 0 || s.k >= n) return Status::InvalidArgument(s.dir + ": shard " + std::to_string(s.k) + " of " + std::to_string(n) + " is out of range");
    auto [it, fresh] = seen.emplace(s.k, s.dir);
    if (!fresh) {
      return Status::InvalidArgument("shard " + std::to_string(s.k) + "/" + std::to_string(n) + " given twice: " +
                                     it->second + " and " + s.dir);
    }
  }
  std::string missing;
  for (int k = 0; k < n; ++k) {
    if (!seen.count(k)) missing += (missing.empty() ? "" : ", ") + std::to_string(k);
  }
  if (!missing.empty()) {
    return Status::InvalidArgument("missing shard(s) " + missing + " of " + std::to_string(n) +
                                   ": a merge needs every shard's directory (bench --shard K/" + std::to_string(n) + ")");
  }
  return Status::Ok();
}

// The SLOs the summary is judged on: the card's (its hash must match the shards'). A card
// bench built from flags has none.
Result<card::SloSpec> SloFor(const json& manifest, const std::string& card_path) {
  if (manifest.contains(json::json_pointer("/card/synthesised_from_flags"))) return card::SloSpec{};
  const std::string path = !card_path.empty() ? card_path : manifest.value(json::json_pointer("/card/path"), std::string());
  if (path.empty()) return Status::InvalidArgument("merge: the shards' manifest names no card file: pass --card FILE");
  Result<card::WorkloadCard> c = card::LoadCardFile(path);
  if (!c.ok()) return c.status().WithContext("merge: the shards' card (pass --card FILE if it moved)");
  const std::string want = manifest.value(json::json_pointer("/card/sha256"), std::string());
  if (c->content_hash != want) {
    return Status::InvalidArgument("merge: " + path + " is not the card the shards ran (sha256 " +
                                   c->content_hash.substr(0, 12) + ", the shards' " + want.substr(0, 12) + ")");
  }
  return c->slo;
}

}  // namespace

Result<MergeResult> MergeShards(const MergeOptions& opt) {
  if (opt.dirs.empty()) return Status::InvalidArgument("merge: no shard directories given");
  std::vector<ShardRun> shards;
  for (const std::string& d : opt.dirs) {
    INFERENG_ASSIGN_OR_RETURN(ShardRun r, ReadShard(d));
    shards.push_back(std::move(r));
  }
  INFERENG_RETURN_IF_ERROR(CheckTogether(shards));
  std::sort(shards.begin(), shards.end(), [](const ShardRun& a, const ShardRun& b) { return a.k < b.k; });
  const json& first = shards.front().manifest;
  INFERENG_ASSIGN_OR_RETURN(card::SloSpec slo, SloFor(first, opt.card_path));
  const bench::Shard any{.k = 0, .n = shards.front().shard["n"].get<int>()};

  // The records of every shard, on the one timeline (relative to the shared t0).
  std::vector<metrics::RequestRecord> records;
  std::unordered_map<uint64_t, int> owner;
  MergeResult res;
  bool partial = false;
  Nanos window_end = 0;
  int64_t t0_min = INT64_MAX, t0_max = INT64_MIN;
  double clock_error = 0;
  res.clock_error_stated = true;
  json per_shard = json::array();
  // Measured clock offsets (shard.clock, bench/clock_sync.h): applied when every shard
  // measured one against the same reference.
  // Shard k's t0 was t0_k on its clock, t0_k + offset_k on the reference's; the merged
  // timeline starts at the earliest of those (shifts >= 0, so no time turns negative).
  std::vector<std::optional<MeasuredClock>> clocks;
  bool apply_clocks = true;
  for (const ShardRun& s : shards) {
    INFERENG_ASSIGN_OR_RETURN(std::optional<MeasuredClock> c, ClockOf(s));
    apply_clocks = apply_clocks && c && (clocks.empty() || (clocks.front() && clocks.front()->reference == c->reference));
    clocks.push_back(std::move(c));
  }
  std::vector<Nanos> shift(shards.size(), 0);
  if (apply_clocks) {
    int64_t origin = INT64_MAX;
    for (std::size_t i = 0; i < shards.size(); ++i) {
      origin = std::min<int64_t>(origin, shards[i].shard["t0_unix_ns"].get<int64_t>() +
                                             static_cast<int64_t>(std::llround(clocks[i]->offset_ms * 1e6)));
    }
    for (std::size_t i = 0; i < shards.size(); ++i) {
      shift[i] = shards[i].shard["t0_unix_ns"].get<int64_t>() + static_cast<int64_t>(std::llround(clocks[i]->offset_ms * 1e6)) -
                 origin;
    }
  } else if (std::any_of(clocks.begin(), clocks.end(), [](const auto& c) { return c.has_value(); })) {
    res.notes.push_back("not every shard measured its clock offset against the same reference: no offsets applied");
  }
  for (std::size_t si = 0; si < shards.size(); ++si) {
    const ShardRun& s = shards[si];
    const std::string path = (fs::path(s.dir) / "requests.jsonl").string();
    int64_t count = 0;
    const bench::Shard mine{.k = s.k, .n = any.n};
    INFERENG_RETURN_IF_ERROR(metrics::ForEachRecordInFile(path, [&](metrics::RequestRecord&& r) {
      if (!bench::InShard(mine, r.id)) {
        return Status::InvalidArgument(path + ": request " + std::to_string(r.id) + " is not shard " +
                                       std::to_string(s.k) + "'s (index % " + std::to_string(any.n) + ")");
      }
      if (auto [it, fresh] = owner.emplace(r.id, s.k); !fresh) {
        return Status::InvalidArgument(path + ": request " + std::to_string(r.id) + " appears twice");
      }
      ++count;
      ShiftRecord(r, shift[si]);
      records.push_back(std::move(r));
      return Status::Ok();
    }));
    const bool p = s.shard.value("partial", false) || s.manifest.value("partial", false);
    partial = partial || p;
    window_end = std::max<Nanos>(window_end, s.shard["window_end_ns"].get<Nanos>() + shift[si]);
    const int64_t t0 = s.shard["t0_unix_ns"].get<int64_t>();
    t0_min = std::min(t0_min, t0);
    t0_max = std::max(t0_max, t0);
    const json& ce = s.shard["clock_uncertainty_ms"];
    if (ce.is_number()) {
      clock_error = std::max(clock_error, ce.get<double>());
    } else {
      res.clock_error_stated = false;
    }
    per_shard.push_back({{"k", s.k}, {"dir", s.dir}, {"host", s.manifest.value("host", "")},
                         {"records", count}, {"partial", p}, {"t0_utc", s.shard.value("t0_utc", "")},
                         {"start_lateness_ms", s.shard.value("start_lateness_ms", 0.0)},
                         {"clock_uncertainty_ms", ce},
                         {"clock_offset_ms", clocks[si] ? json(clocks[si]->offset_ms) : json(nullptr)},
                         {"clock_offset_uncertainty_ms", clocks[si] ? json(clocks[si]->uncertainty_ms) : json(nullptr)},
                         {"shift_ms", static_cast<double>(shift[si]) / 1e6}});
  }
  std::sort(records.begin(), records.end(), [](const metrics::RequestRecord& a, const metrics::RequestRecord& b) {
    return a.t_sched != b.t_sched ? a.t_sched < b.t_sched : a.id < b.id;
  });

  metrics::AccumulatorOptions ao;
  ao.open_loop = first.value(json::json_pointer("/load/mode"), std::string()) != "closed_loop";
  ao.slo = slo;
  ao.warmup = shards.front().shard["warmup_ns"].get<Nanos>();
  ao.t0 = 0;
  ao.window_end = window_end;
  metrics::SummaryAccumulator acc(ao);
  fs::create_directories(opt.out);
  INFERENG_ASSIGN_OR_RETURN(std::unique_ptr<metrics::RecordWriter> writer,
                            metrics::RecordWriter::Open((fs::path(opt.out) / "requests.jsonl").string(), 0));
  for (const metrics::RequestRecord& r : records) {
    acc.Add(r);
    INFERENG_RETURN_IF_ERROR(writer->Write(r));
  }
  INFERENG_RETURN_IF_ERROR(writer->Close());
  acc.SetPartial(partial);
  res.summary = acc.Finish();
  res.shards = static_cast<int>(shards.size());
  res.records = static_cast<int64_t>(records.size());
  const double skew_ms = static_cast<double>(t0_max - t0_min) / 1e6;
  res.alignment_uncertainty_ms = skew_ms + clock_error;
  res.clock_offsets_applied = apply_clocks;
  if (apply_clocks) {
    // Each shard sits within its own measured uncertainty of the reference, so two shards
    // within the sum of theirs: the two largest bound every pair. The start skew is measured
    // on the reference's time and shifted out.
    std::vector<double> u;
    for (const auto& c : clocks) u.push_back(c->uncertainty_ms);
    std::sort(u.rbegin(), u.rend());
    res.alignment_uncertainty_ms = u.size() > 1 ? u[0] + u[1] : 0;
    res.clock_error_stated = true;
  } else if (!res.clock_error_stated) {
    res.notes.push_back("not every shard stated its clock error (bench --clock-uncertainty MS): the alignment "
                        "uncertainty counts only the measured start skew");
  }
  if (partial) res.notes.push_back("a shard was partial (interrupted or its target failed): the merge is partial");
  json merge = {{"n", any.n},
                {"shards", per_shard},
                {"records", res.records},
                {"start_skew_ms", skew_ms},
                {"clock_uncertainty_ms", clock_error},
                {"alignment_uncertainty_ms", res.alignment_uncertainty_ms},
                {"clock_error_stated", res.clock_error_stated},
                {"clock_offsets_applied", res.clock_offsets_applied},
                {"clock_reference", apply_clocks ? json(clocks.front()->reference) : json(nullptr)},
                {"note", "per-request latencies are measured on one host each and carry no cross-host error; "
                         "the alignment uncertainty bounds how far one shard's timeline may sit from another's "
                         "(window edges, time series)"}};
  res.summary_json = metrics::SummaryToJson(res.summary);
  res.summary_json["merge"] = merge;
  res.summary_json["notes"] = res.notes;
  res.manifest = first;
  res.manifest.erase("shard");
  res.manifest["partial"] = partial;
  res.manifest["merge"] = merge;
  INFERENG_RETURN_IF_ERROR(WriteJsonFile((fs::path(opt.out) / "summary.json").string(), res.summary_json));
  INFERENG_RETURN_IF_ERROR(WriteJsonFile((fs::path(opt.out) / "manifest.json").string(), res.manifest));
  return res;
}

}  // namespace infereng::job
