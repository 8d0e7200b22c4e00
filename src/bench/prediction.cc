#include "bench/prediction.h"

#include <filesystem>

#include "bench/manifest.h"
#include "catalog/catalog.h"
#include "twin/setup.h"
#include "twin/simulation.h"

namespace infereng::bench {

Status WriteTwinPrediction(const BenchOptions& opt, double engine_speedup, const std::string& dir) {
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
  const Result<catalog::Catalog>& cat = catalog::Catalog::Default();
  if (!cat.ok()) return cat.status();
  INFERENG_ASSIGN_OR_RETURN(twin::TwinSetup setup, twin::ResolveTwin(card, {}, *cat));

  const std::string pdir = dir + "/predicted";
  std::error_code ec;
  std::filesystem::create_directories(pdir, ec);
  if (ec) return Status::IoError(pdir + ": " + ec.message());

  twin::SimulationOptions so;
  const double warmup_s = opt.warmup ? NanosToSeconds(*opt.warmup) : card.bench.warmup_s;
  const double window_s = opt.duration ? NanosToSeconds(*opt.duration) : card.bench.duration_s;
  so.duration_s = warmup_s + window_s;
  so.warmup_s = warmup_s;
  so.seed = opt.seed.value_or(card.bench.seed);
  // The same load as the measurement: the twin resolves these as ResolveLoadPlan does.
  so.rate_rps = opt.rate_rps;
  so.concurrency = opt.concurrency;
  so.ramp_s = NanosToSeconds(opt.ramp);
  so.records_path = pdir + "/requests.jsonl";
  so.exact_percentiles = true;
  INFERENG_ASSIGN_OR_RETURN(twin::SimulationResult sim, twin::RunSimulation(card, setup, so));

  return WriteJsonFile(pdir + "/summary.json", twin::SimulationResultToJson(sim));
}

}  // namespace infereng::bench
