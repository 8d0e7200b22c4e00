// What a bench job adds to summary.json beside the one summary schema (metrics/): the
// client's own cost, achieved prompt lengths, the output-length control used, the quality
// check, the cold-start requests, the trials' aggregate and verdict, the engine's /metrics
// files and its view of the run, and the notes. One typed struct, written and read by the
// functions below, so the keys are spelled in one place (docs/results-schema.md, "What a
// bench run adds").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/prompt.h"
#include "core/status.h"
#include "metrics/quality.h"

namespace infereng::job {

// "client": what the load generator itself cost.
struct ClientCost {
  double cpu_s = 0;                                  // dispatcher + io + pipeline threads
  std::optional<double> cpu_s_per_1m_output_tokens;  // null without output tokens
  int64_t connections_opened = 0;
  int64_t stale_connections_dropped = 0;             // idle connections found closed before reuse
  int64_t requests_retried = 0;                      // re-sent after a kept-alive connection failed
  double retry_time_lost_s = 0;
  int64_t io_threads = 1;                            // connections sharded across them (--io-threads)
  // Connections opened before the measured phase (bench --no-preconnect turns it off), so
  // connection setup is timed here and not inside the first requests' TTFT.
  struct Preconnect {
    int64_t requested = 0, opened = 0, failed = 0;
    double seconds = 0;         // the whole batch
    double connect_ms_max = 0;  // the slowest single open (TCP + TLS)
  };
  std::optional<Preconnect> preconnect;
  // The saturation verdict and its signals (job/client_saturation.h SaturationToJson).
  std::optional<nlohmann::json> saturation;
};

struct SummaryExtras {
  ClientCost client;
  std::optional<bench::LengthReport> prompt_lengths;  // synthetic prompts only
  std::string output_length_control;                  // "ignore_eos+min_tokens" | ... | "not controlled"
  std::optional<metrics::QualityReport> quality;      // with an eval set: the charted trial's checks
  std::optional<nlohmann::json> cold_start;           // metrics::SummaryToJson of the cold-start requests
  std::optional<nlohmann::json> trace;                // trace replay: trace::ReplayInfoToJson (docs/replay.md)
  std::optional<nlohmann::json> trials;               // metrics::TrialStatsToJson + "verdict" (--trials > 1)
  nlohmann::json engine_metrics_files = nlohmann::json::object();  // {"before": FILE, "after": FILE}
  std::optional<nlohmann::json> engine_metrics;       // client::EngineMetricsDelta (both scrapes worked)
  std::vector<std::string> notes;
};

// Adds the extras' keys to `summary` (a metrics::SummaryToJson object); absent optionals
// and an empty engine_metrics_files add no key.
void AddExtrasToJson(const SummaryExtras& extras, nlohmann::json* summary);

// The extras of a summary.json object (what AddExtrasToJson wrote). InvalidArgument naming
// the key when one has the wrong type; missing keys stay unset.
Result<SummaryExtras> SummaryExtrasFromJson(const nlohmann::json& summary);

}  // namespace infereng::job
