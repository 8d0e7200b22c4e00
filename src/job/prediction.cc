#include "job/prediction.h"

#include <fmt/format.h>

#include <filesystem>

#include "job/manifest.h"
#include "catalog/catalog.h"
#include "twin/setup.h"
#include "twin/simulation.h"

namespace infereng::job {

Status WriteTwinPrediction(const bench::BenchOptions& opt, double engine_speedup, const std::string& dir,
                           const metrics::Summary* measured, Fidelity* fidelity, const PredictionModel& model) {
  const card::WorkloadCard& card = opt.card;
  if (card.model.architecture.empty()) {
    return Status::FailedPrecondition("the card has no model.architecture (e.g. llama-3.1-8b) for the twin to simulate");
  }
  if (card.deployment.accelerator.empty()) {
    return Status::FailedPrecondition("the card has no deployment.accelerator (e.g. h100-sxm) for the twin to simulate");
  }
  if (engine_speedup != 1.0) {
    return Status::FailedPrecondition("the engine ran with a speed-up: its times are not engine time");
  }
  if (opt.requests) {
    return Status::FailedPrecondition("--requests runs have no fixed window to simulate (use --duration)");
  }
  const double warmup_s = opt.warmup ? NanosToSeconds(*opt.warmup) : card.bench.warmup_s;
  const double window_s = opt.duration ? NanosToSeconds(*opt.duration) : card.bench.duration_s;
  double arrivals_s = warmup_s + window_s;
  std::string note = "it covers the run's planned window";
  const bool cut = measured != nullptr && measured->partial;
  if (cut) {
    // Interrupted: the measurement ends early, so must the prediction (arrivals stop where
    // the measured window ended), or a full-length prediction overlays a partial run.
    if (!(measured->window_end_s > warmup_s)) {
      return Status::FailedPrecondition("the run was interrupted before its measurement window began");
    }
    arrivals_s = measured->window_end_s;
    note = fmt::format("it is cut to the measured window ({:.3g} s of arrivals): the run was interrupted", arrivals_s);
  }
  const Result<catalog::Catalog>& cat = catalog::Catalog::Default();
  if (!cat.ok()) return cat.status();
  twin::SetupOptions setup_options;
  setup_options.sets = model.sets;
  INFERENG_ASSIGN_OR_RETURN(twin::TwinSetup setup, twin::ResolveTwin(card, setup_options, *cat));
  if (model.cost) setup.UseMeasuredCost(model.cost, model.cost_label);

  const std::string pdir = dir + "/predicted";
  std::error_code ec;
  std::filesystem::create_directories(pdir, ec);
  if (ec) return Status::IoError(pdir + ": " + ec.message());

  twin::SimulationOptions so;
  so.duration_s = arrivals_s;
  so.warmup_s = warmup_s;
  so.seed = opt.seed.value_or(card.bench.seed);
  // The same load as the measurement: the twin resolves these as ResolveLoadPlan does.
  so.rate_rps = opt.rate_rps;
  so.concurrency = opt.concurrency;
  so.ramp_s = NanosToSeconds(opt.ramp);
  so.records_path = pdir + "/requests.jsonl";
  so.exact_percentiles = true;
  INFERENG_ASSIGN_OR_RETURN(twin::SimulationResult sim, twin::RunSimulation(card, setup, so));

  nlohmann::json j = twin::SimulationResultToJson(sim);
  j["prediction"] = {{"arrivals_s", arrivals_s}, {"warmup_s", warmup_s}, {"cut_to_measured", cut},
                     {"note", note},
                     {"cost_model", model.cost ? model.cost_label : std::string("roofline")}};
  if (measured != nullptr) {
    // The twin's own spread: the same load with two other seeds (summaries only).
    std::vector<metrics::Summary> seeds = {sim.summary};
    for (uint64_t k = 1; k <= 2; ++k) {
      twin::SimulationOptions other = so;
      other.seed = *so.seed + k;
      other.records_path.clear();
      INFERENG_ASSIGN_OR_RETURN(twin::SimulationResult r, twin::RunSimulation(card, setup, other));
      seeds.push_back(std::move(r.summary));
    }
    Fidelity f = CompareWithPrediction(*measured, seeds, sim.twin.near_saturation, sim.twin.saturation_note);
    j["fidelity"] = FidelityToJson(f);
    if (fidelity != nullptr) *fidelity = std::move(f);
  }
  return WriteJsonFile(pdir + "/summary.json", j);
}

}  // namespace infereng::job
