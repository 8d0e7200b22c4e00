// Capacity search: the cheapest deployment (accelerator x count x TP x replicas) that
// meets every SLO of a card at its peak rate times a burst headroom.
//
// The load is the one bench applies (the load rule: workload/client_load.h): open loop at
// the peak rate x headroom, capped in flight when the rule says so (waiting in the client
// counts against TTFT/E2E incl. queue). A closed loop plans for exactly C users: it never
// has more than C in flight, so there is no burst to add headroom for; its throughput is
// what C users reach, and the search finds the fewest replicas at which C users meet the
// latency SLOs and the throughput floor (slo.min_output_tokens_per_s; a batch job's usual
// question). When more replicas stop helping (per-request latency, not capacity, binds),
// it says so.
//
// For each accelerator and each count in {1, 2, 4, 8} (TP = count: one replica spans its
// accelerators with tensor parallelism): prune with the fit first (the weights must leave
// a KV pool that holds at least one request of the card's largest size), then simulate
// the card at the target rate with 1, 2, 4, ... replicas until it passes, and bisect
// down to the fewest replicas that pass. Candidates are tried in order of price per
// replica; a candidate whose one-replica price already exceeds the best total is skipped
// ("pruned by cost"). Pass = every run-level SLO and the attainment target pass, nothing
// left unfinished and the queue not growing (a card without SLOs only needs stability).
//
// Thread-safety: pure function of its inputs.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "card/card.h"
#include "catalog/catalog.h"
#include "core/status.h"
#include "twin/cost_model.h"

namespace infereng::twin {

struct CapacityOptions {
  std::vector<std::string> accelerators;  // empty: the card's constraints, else the catalog
  std::vector<int> counts = {1, 2, 4, 8};
  double burst_headroom = 1.3;
  std::optional<double> rate_rps;         // default: traffic.peak_rate, else the arrival rate
  std::optional<int> concurrency;         // alone: a closed loop of C users; with rate_rps: a cap
  double duration_s = 120;                // simulated arrival period per trial
  int max_replicas = 64;
  std::vector<std::string> sets;          // --set overrides for every candidate
  // A measured cost model (--profile): every candidate prices steps with it;
  // `measured_label` ("measured profile PATH") is added to their description.
  std::shared_ptr<const CostModel> measured_cost;
  std::string measured_label;
  std::optional<uint64_t> seed;
};

struct CapacityCandidate {
  std::string accelerator;
  int count = 1;
  int tp = 1;
  int replicas = 0;             // fewest passing (0: none found)
  bool fits = false;
  bool passes = false;
  bool winner = false;
  double price_per_hour_usd = 0;  // of the whole deployment (replicas x count x price)
  double ttft_p99_ms = 0, tpot_p50_ms = 0, e2e_p99_ms = 0, slo_attainment = 0;
  double kv_usage_mean = 0;
  int simulations = 0;
  std::string verdict;          // why it won or lost, one sentence
  std::vector<std::string> cost_caveats;  // the roofline's known limits on this deployment
                                          // (twin/cost_caveats.h; none with a measured profile)
};

struct CapacityResult {
  bool closed_loop = false;
  int concurrency = 0;           // closed loop: the users planned for; open loop: the cap (0 none)
  double target_rps = 0;         // open loop: peak x headroom (closed loop: 0)
  std::vector<CapacityCandidate> candidates;
  std::optional<size_t> winner;  // index into candidates
  std::optional<double> budget_per_hour_usd;
  bool within_budget = true;
  int simulations = 0;
};

Result<CapacityResult> SearchCapacity(const card::WorkloadCard& card, const catalog::Catalog& catalog,
                                      const CapacityOptions& options);

nlohmann::json CapacityResultToJson(const CapacityResult& r);
std::string FormatCapacityResult(const CapacityResult& r);

}  // namespace infereng::twin
