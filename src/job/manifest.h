// manifest.json: what a run was, so anyone can reproduce or distrust it. Target URL
// (never user info, query tokens or keys), model id and revision, engine and version as
// the server reported them (and which endpoints answered), infereng version and git
// commit, card path and SHA-256 (bench without --card: card.synthesised_from_flags), seed,
// load shape, prompt source and length control, host name and start wall time. Whether an
// API key was used is recorded by its source (variable name or file path), never its value.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "bench/bench_options.h"
#include "bench/engine_probe.h"
#include "bench/load_plan.h"
#include "bench/prompt.h"

namespace infereng::job {

struct ManifestInputs {
  const bench::BenchOptions* options = nullptr;
  const bench::LoadPlan* plan = nullptr;
  const bench::ServerInfo* server = nullptr;
  std::string target_display;
  std::string model_id;
  std::string model_revision;
  std::string prompt_source;        // "synthetic" | "dataset:PATH"
  std::string length_calibration;   // "tokenize" | "usage-fit" | "none (dataset)"
  bench::LengthModel length_model;
  std::string output_length_control;  // "ignore_eos+min_tokens" | ... | "not controlled"
  std::string api_key_source;       // "none" | "env:NAME" | "file:PATH"
  std::string start_wall;           // ISO 8601 UTC
  double mean_rate_rps = 0;         // offered mean rate (open loop)
  nlohmann::json trace;             // trace replay: trace::ReplayInfoToJson (null otherwise)
  nlohmann::json shard_clock;       // --clock-ref: shard.clock (job/shard_plan.h); null otherwise
};

nlohmann::json BuildManifest(const ManifestInputs& in);

std::string HostName();

// Writes `text` to `path` (write to PATH.tmp, then rename: never half a file). IoError
// names the file.
Status WriteTextFile(const std::string& path, const std::string& text);
// WriteTextFile of `j` pretty-printed, with a final newline.
Status WriteJsonFile(const std::string& path, const nlohmann::json& j);

}  // namespace infereng::job
