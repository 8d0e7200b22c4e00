// Simulation: runs a workload card through a simulated cluster in virtual time and
// summarises it with the one metrics module (metrics::SummaryAccumulator), exactly as a
// measured run would be. This is the library entry point of `simulate`, `capacity` and
// `sweep --simulate`.
//
// The cluster: N replicas (twin::Engine each) behind a Router, with an optional
// Autoscaler (cold starts, cooldown, scale to zero). Requests come from the ONE workload
// generator (same card + seed as `bench`) through a client layer (twin/load_client.h) that
// applies the same load as the benchmark client (the load rule: workload/client_load.h).
// Each finished request becomes a RequestRecord with virtual-time
// chunk timestamps, t_sched/t_send as the client saw them, t_server_scheduled,
// t_prefill_done and replica. Records stream into the accumulator (configured as bench
// configures it for that load; histogram mode: memory independent of the simulated
// duration) and, when asked, into a records.jsonl file or memory.
//
// Time: arrivals stop at `duration` (closed loop: no send at or after it); in-flight
// requests then drain for up to `drain_s` after the last send (still unfinished: error
// "incomplete"). The measurement window is the accumulator's (warm-up .. last t_sched).
//
// Thread-safety: RunSimulation is reentrant (no globals); run several in parallel freely.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "card/card.h"
#include "core/status.h"
#include "metrics/record.h"
#include "metrics/summary.h"
#include "twin/setup.h"

namespace infereng::twin {

// The most requests the twin holds in the system at once (waiting in the client, queued or
// running): a load far beyond capacity would otherwise queue without bound (issue 10:
// `simulate --rate 1000000` reached 4.9 GB in 25 s). Reaching it stops the arrivals; the
// run drains, is marked partial and says so (TwinReport::arrivals_stopped_s). About 1 KB
// each (record, engine request, prefix hashes): ~100 MB at the bound. A closed loop of more
// users than this stops sending at the bound too (partial, noted).
inline constexpr int64_t kMaxInSystem = 100'000;

struct SimulationOptions {
  std::optional<double> duration_s;   // default: the card's bench.duration_s
  std::optional<uint64_t> seed;       // default: the card's bench.seed
  // The load: rate_rps, concurrency, rate_scale and ramp_s go through the load rule
  // (workload/client_load.h), as bench's flags do.
  std::optional<double> rate_rps;     // absolute mean rate (overrides rate_scale)
  std::optional<int> concurrency;
  double rate_scale = 1.0;            // multiplies the open-loop arrival rate
  double ramp_s = 0;                  // bench --ramp: the rate (open) or concurrency (closed) ramps up
  std::optional<double> warmup_s;     // default: min(card bench.warmup_s, duration / 10)
  double drain_s = 300;               // after the last arrival
  std::string records_path;           // write records.jsonl here ("" = no)
  bool keep_records = false;          // return the records (tests; exact percentiles)
  bool exact_percentiles = false;     // exact mode even without keep_records
  std::optional<uint64_t> max_requests;
  // The run ends when `max_requests` requests have finished, not at a duration (bench
  // --requests N; with --rate inf every request is sent at t = 0). The twin then runs twice:
  // once unbounded to find the makespan, once with the window set to it, so the summary's
  // window is the run's. TwinReport::makespan_s reports it.
  bool count_limited = false;
  bool summary_thread = true;         // summarise on a worker thread (same results either way)
  int64_t max_in_system = kMaxInSystem;  // arrivals stop when this many requests are in the system
};

// One point of the cluster over time.
struct ClusterSample {
  double t_s = 0;
  int32_t serving = 0;     // replicas accepting traffic
  int32_t starting = 0;    // cold-starting replicas
  double kv_usage = 0;     // mean over serving replicas, 0..1
  int64_t waiting = 0;     // engine queues + router queue + client (capped open loop)
  int64_t running = 0;
};

// A disaggregated cluster (ClusterConfig::prefill_replicas): its pools and KV transfers.
struct DisaggregationReport {
  int32_t prefill_replicas = 0;
  int32_t decode_replicas = 0;
  double kv_bytes_per_token = 0;     // whole model
  double link_gb_s = 0;              // one prefill replica's link
  double link_latency_ms = 0;        // per transfer
  int64_t transfers = 0;
  double transferred_gb = 0;
  double transfer_ms_mean = 0, transfer_ms_p50 = 0, transfer_ms_p99 = 0;  // on the link + latency
  double link_wait_ms_mean = 0, link_wait_ms_p99 = 0;  // queued behind the replica's other transfers
  double prefill_busy = 0;           // share of the prefill pool's time in steps
  double decode_busy = 0;            // share of the decode pool's time in steps
};

// What the twin knows beyond the Summary (JSON under "twin").
struct TwinReport {
  std::string description;          // model on accelerators
  std::vector<std::string> cost_caveats;  // TwinSetup::cost_caveats: the cost model's known limits here
  FrontEnd front_end;               // per request outside the engine (twin/front_end.h)
  // The client's load (workload/client_load.h) and what it did.
  std::string load_mode;            // "open_loop" | "open_loop_capped" | "closed_loop"
  std::string load_arrival;         // open loop: "poisson", "constant", ... (closed loop: "closed")
  double load_rate_rps = 0;         // open loop: mean offered rate (closed loop: 0)
  int32_t load_concurrency = 0;     // closed loop: users; capped: the cap; else 0
  int64_t client_waiting_peak = 0;  // most requests waiting in the client for a slot
  double simulated_s = 0;           // virtual time simulated (arrivals + drain)
  double wall_s = 0;                // host time the simulation took
  int64_t requests = 0;             // generated
  double mean_input_tokens = 0;     // of the generated requests
  double mean_output_tokens = 0;
  int64_t steps = 0;                // engine iterations, all replicas
  int64_t events = 0;               // arrivals + steps + finishes + cluster events
  double kv_usage_mean = 0;         // time-averaged over serving replicas
  double kv_usage_peak = 0;         // highest sampled
  double prefix_hit_rate = 0;       // hit tokens / queried prompt tokens
  int64_t prefix_hit_tokens = 0;
  int64_t prefill_tokens_computed = 0;
  int64_t preemptions = 0;
  int64_t rejections = 0;
  std::map<std::string, int64_t> rejections_by_reason;
  int64_t timeouts = 0;
  int64_t incomplete = 0;           // still in flight at the drain limit
  double arrivals_stopped_s = -1;   // >= 0: arrivals stopped then, max_in_system reached (partial)
  double spec_acceptance_observed = 0;  // accepted / proposed draft tokens
  double replicas_mean = 0;         // time-averaged billed replicas (serving + starting + draining)
  int32_t replicas_max = 0;
  int64_t scale_events = 0;
  std::vector<ClusterSample> over_time;
  // Cost (price: accelerators x per-accelerator price, billed while a replica exists).
  double price_per_replica_hour = 0;
  double cost_usd = 0;
  double cost_per_hour_usd = 0;
  double cost_per_1m_output_tokens_usd = 0;
  double cost_per_successful_request_usd = 0;
  // Saturation: a mean-field estimate of offered load / capacity (1 = saturated), and
  // whether the queue was still growing at the end of the arrivals.
  double utilisation_estimate = 0;
  double capacity_rps_estimate = 0;
  bool queue_growing = false;
  bool near_saturation = false;     // utilisation >= 0.9 or queue growing
  std::string saturation_note;      // what to tell the user ("" when far from saturation)
  // Count-limited runs (SimulationOptions::count_limited): time from t = 0 to the last
  // request's end, and the makespan throughput (offline "N requests" benchmarks quote this,
  // not a windowed rate). -1 / 0 otherwise.
  double makespan_s = -1;
  double makespan_requests_per_s = 0;
  double makespan_output_tokens_per_s = 0;
  // Little's law on the whole run: L (time-averaged requests in system) vs lambda * W.
  double little_l = 0, little_lambda = 0, little_w_s = 0;
  std::optional<DisaggregationReport> disaggregation;  // only for a disaggregated cluster
};

struct SimulationResult {
  metrics::Summary summary;
  TwinReport twin;
  std::vector<metrics::RequestRecord> records;  // only with keep_records
};

Result<SimulationResult> RunSimulation(const card::WorkloadCard& card, const TwinSetup& setup,
                                       const SimulationOptions& options);

// The one-call form for `sweep --simulate` and other callers: resolves the card with the
// default catalog and `sets` ("engine.max_num_seqs=64"), applies the load overrides
// (as SimulationOptions) and runs it.
struct SimulateCall {
  std::vector<std::string> sets;
  std::optional<double> rate_rps;
  std::optional<int> concurrency;
  double rate_scale = 1.0;
  std::optional<double> duration_s;
  std::optional<uint64_t> seed;
  std::optional<int> replicas;
};
Result<SimulationResult> SimulateCard(const card::WorkloadCard& card, const SimulateCall& call);

nlohmann::json TwinReportToJson(const TwinReport& report);
// "closed loop, 128 users" / "open loop 50 rps (constant), at most 128 in flight" /
// "open loop 20 rps (poisson)": what `simulate` and reports print.
std::string DescribeLoad(const TwinReport& report);
// The summary in the one schema plus "twin": {...}.
nlohmann::json SimulationResultToJson(const SimulationResult& result);

}  // namespace infereng::twin
