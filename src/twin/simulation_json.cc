// The simulation's JSON (the one summary schema plus "twin") and the one-call
// SimulateCard used by `sweep --simulate` and other callers.
#include <fmt/format.h>

#include "catalog/catalog.h"
#include "core/units.h"
#include "metrics/summary_json.h"
#include "twin/simulation.h"

namespace infereng::twin {

Result<SimulationResult> SimulateCard(const card::WorkloadCard& card, const SimulateCall& call) {
  auto cat = catalog::Catalog::Load();
  if (!cat.ok()) return cat.status();
  SetupOptions so;
  so.sets = call.sets;
  so.replicas = call.replicas;
  INFERENG_ASSIGN_OR_RETURN(TwinSetup setup, ResolveTwin(card, so, *cat));
  SimulationOptions opt;
  opt.rate_rps = call.rate_rps;
  opt.concurrency = call.concurrency;
  opt.rate_scale = call.rate_scale;
  opt.duration_s = call.duration_s;
  opt.seed = call.seed;
  return RunSimulation(card, setup, opt);
}

std::string DescribeLoad(const TwinReport& t) {
  if (t.load_mode == "closed_loop") {
    return fmt::format("closed loop, {} user{}", t.load_concurrency, t.load_concurrency == 1 ? "" : "s");
  }
  std::string s = "open loop " + units::FormatSignificant(t.load_rate_rps) + " rps (" + t.load_arrival + ")";
  if (t.load_concurrency > 0) s += fmt::format(", at most {} in flight", t.load_concurrency);
  return s;
}

nlohmann::json TwinReportToJson(const TwinReport& t) {
  nlohmann::json over = nlohmann::json::array();
  for (const ClusterSample& s : t.over_time) {
    over.push_back({{"t_s", s.t_s}, {"serving", s.serving}, {"starting", s.starting},
                    {"kv_usage", s.kv_usage}, {"waiting", s.waiting}, {"running", s.running}});
  }
  nlohmann::json j = {
      {"description", t.description},
      {"cost_caveats", t.cost_caveats},
      {"load",
       {{"mode", t.load_mode},
        {"arrival", t.load_arrival},
        {"rate_rps", t.load_mode == "closed_loop" ? nlohmann::json(nullptr) : nlohmann::json(t.load_rate_rps)},
        {"concurrency", t.load_concurrency > 0 ? nlohmann::json(t.load_concurrency) : nlohmann::json(nullptr)},
        {"client_waiting_peak", t.client_waiting_peak},
        {"text", DescribeLoad(t)}}},
      {"simulated_s", t.simulated_s},
      {"wall_s", t.wall_s},
      {"speedup_vs_real_time", t.wall_s > 0 ? t.simulated_s / t.wall_s : 0},
      {"requests", t.requests},
      {"steps", t.steps},
      {"events", t.events},
      {"kv_usage_mean", t.kv_usage_mean},
      {"kv_usage_peak", t.kv_usage_peak},
      {"prefix_hit_rate", t.prefix_hit_rate},
      {"prefix_hit_tokens", t.prefix_hit_tokens},
      {"prefill_tokens_computed", t.prefill_tokens_computed},
      {"preemptions", t.preemptions},
      {"rejections", t.rejections},
      {"rejections_by_reason", t.rejections_by_reason},
      {"timeouts", t.timeouts},
      {"incomplete", t.incomplete},
      {"spec_acceptance_observed", t.spec_acceptance_observed},
      {"replicas_mean", t.replicas_mean},
      {"replicas_max", t.replicas_max},
      {"scale_events", t.scale_events},
      {"over_time", over},
      {"cost",
       {{"price_per_replica_hour_usd", t.price_per_replica_hour},
        {"total_usd", t.cost_usd},
        {"per_hour_usd", t.cost_per_hour_usd},
        {"per_1m_output_tokens_usd", t.cost_per_1m_output_tokens_usd},
        {"per_successful_request_usd", t.cost_per_successful_request_usd}}},
      {"saturation",
       {{"utilisation_estimate", t.utilisation_estimate},
        {"capacity_rps_estimate", t.capacity_rps_estimate},
        {"queue_growing", t.queue_growing},
        {"near_saturation", t.near_saturation},
        {"note", t.saturation_note}}},
      {"littles_law", {{"L", t.little_l}, {"lambda_rps", t.little_lambda}, {"W_s", t.little_w_s}}},
  };
  // Only when the twin charges a front end (a setup built by hand has none).
  if (!t.front_end.none()) {
    j["front_end"] = {{"preprocess_ms", t.front_end.preprocess_s * 1e3},
                      {"network_ms", t.front_end.network_s * 1e3},
                      {"postprocess_ms", t.front_end.postprocess_s * 1e3},
                      {"source", t.front_end.source}};
    if (t.front_end.jitter_s > 0) j["front_end"]["jitter_mean_ms"] = t.front_end.jitter_s * 1e3;
  }
  // Only when the in-system bound stopped the arrivals (normal runs keep their schema).
  if (t.arrivals_stopped_s >= 0) j["arrivals_stopped_s"] = t.arrivals_stopped_s;
  if (t.disaggregation) {
    const DisaggregationReport& d = *t.disaggregation;
    j["disaggregation"] = {{"prefill_replicas", d.prefill_replicas},
                           {"decode_replicas", d.decode_replicas},
                           {"kv_bytes_per_token", d.kv_bytes_per_token},
                           {"link_gb_s", d.link_gb_s},
                           {"link_latency_ms", d.link_latency_ms},
                           {"transfers", d.transfers},
                           {"transferred_gb", d.transferred_gb},
                           {"transfer_ms", {{"mean", d.transfer_ms_mean}, {"p50", d.transfer_ms_p50}, {"p99", d.transfer_ms_p99}}},
                           {"link_wait_ms", {{"mean", d.link_wait_ms_mean}, {"p99", d.link_wait_ms_p99}}},
                           {"prefill_busy", d.prefill_busy},
                           {"decode_busy", d.decode_busy}};
  }
  // Only for count-limited runs (--requests N), where the makespan is the run's length.
  if (t.makespan_requests_per_s > 0) {
    j["makespan"] = {{"seconds", t.makespan_s},
                     {"requests_per_s", t.makespan_requests_per_s},
                     {"output_tokens_per_s", t.makespan_output_tokens_per_s}};
  }
  return j;
}

nlohmann::json SimulationResultToJson(const SimulationResult& r) {
  nlohmann::json j = metrics::SummaryToJson(r.summary);
  j["twin"] = TwinReportToJson(r.twin);
  return j;
}

}  // namespace infereng::twin
