#include "job/manifest.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "infereng/version_info.h"
#include "job/shard_plan.h"

namespace infereng::job {

std::string HostName() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

nlohmann::json BuildManifest(const ManifestInputs& in) {
  using nlohmann::json;
  const bench::BenchOptions& o = *in.options;
  const bench::LoadPlan& p = *in.plan;
  json load = {
      {"mode", p.closed_loop ? "closed_loop" : (p.concurrency > 0 ? "open_loop_capped" : "open_loop")},
      {"arrival", p.arrival},
      {"concurrency", p.concurrency > 0 ? json(p.concurrency) : json(nullptr)},
      {"rate_rps", p.closed_loop ? json(nullptr) : json(in.mean_rate_rps)},
      {"rate_scale", p.rate_scale},
      {"duration_s", p.requests >= 0 ? json(nullptr) : json(NanosToSeconds(p.duration))},
      {"requests", p.requests >= 0 ? json(p.requests) : json(nullptr)},
      {"warmup_s", NanosToSeconds(p.warmup)},
      {"cooldown_s", NanosToSeconds(p.cooldown)},
      {"ramp_s", NanosToSeconds(p.ramp)},
      {"trials", p.trials},
      {"timeout_s", NanosToSeconds(p.timeout)},
      {"cold_start_requests", o.cold_start_requests},
      {"endpoint", bench::ApiEndpointName(p.endpoint)},
  };
  if (o.card.traffic.arrival.kind == card::ArrivalSpec::Kind::kTrace && !p.closed_loop) {
    load["trace_file"] = o.card.traffic.arrival.trace_file;
    load["trace_speed"] = o.card.traffic.arrival.trace_speed * p.rate_scale;
    if (!o.card.traffic.arrival.trace_sessions.empty()) {  // replayed as sessions (docs/replay.md)
      load["trace_sessions"] = o.card.traffic.arrival.trace_sessions;
      load["trace_parallel_window_s"] = o.card.traffic.arrival.trace_parallel_window_s;
    }
  }
  json j = {
      {"schema", "infereng.manifest/1"},
      {"tool", {{"name", "infereng"}, {"version", build::kVersion}, {"git_commit", build::kGitCommit},
                {"git_dirty", build::kGitDirty}}},
      {"target", in.target_display},
      {"model", {{"id", in.model_id}, {"revision", in.model_revision.empty() ? json(nullptr) : json(in.model_revision)}}},
      {"engine", {{"name", in.server->engine},
                  {"version", in.server->engine_version.empty() ? json(nullptr) : json(in.server->engine_version)},
                  {"probes", in.server->probes},
                  {"tokenize", in.server->has_tokenize},
                  {"tokenize_field", in.server->tokenize_field.empty() ? json(nullptr) : json(in.server->tokenize_field)},
                  {"metrics", in.server->has_metrics}}},
      {"card", {{"name", o.card.name}, {"path", o.card.source_path}, {"sha256", o.card.content_hash}}},
      {"seed", p.seed},
      {"load", load},
      {"prompts", {{"source", in.prompt_source},
                   {"length_calibration", in.length_calibration},
                   {"salt", p.prompt_salt},
                   {"tokens_per_word", in.length_model.tokens_per_word},
                   {"overhead_tokens", in.length_model.overhead_tokens}}},
      {"output_length_control", in.output_length_control},
      {"quality", {{"eval_set", o.card.quality.eval_set.empty() ? json(nullptr) : json(o.card.quality.eval_set)},
                   {"every_nth_request", o.quality_every}}},
      {"api_key", in.api_key_source},
      {"host", HostName()},
      {"start_time_utc", in.start_wall},
      {"clock", "steady_clock ns; times in requests.jsonl are ms since the trial's t0"},
  };
  if (!o.card_from_flags.is_null()) j["card"]["synthesised_from_flags"] = o.card_from_flags;
  if (o.shard) {
    j["shard"] = ShardManifest(o, p);
    if (!in.shard_clock.is_null()) j["shard"]["clock"] = in.shard_clock;
  }
  if (!in.trace.is_null()) j["trace"] = in.trace;
  if (!o.extra_manifest.is_null()) j.update(o.extra_manifest);
  return j;
}

Status WriteTextFile(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) return Status::IoError(tmp + ": cannot be written");
    out << text;
    if (!out.flush()) return Status::IoError(tmp + ": write failed");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) return Status::IoError(path + ": rename failed");
  return Status::Ok();
}

Status WriteJsonFile(const std::string& path, const nlohmann::json& j) { return WriteTextFile(path, j.dump(2) + "\n"); }

}  // namespace infereng::job
