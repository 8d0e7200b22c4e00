#include "testing/sim_run_dir.h"

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "card/card_parser.h"
#include "catalog/catalog.h"
#include "metrics/summary_json.h"
#include "testing/paths.h"
#include "twin/setup.h"
#include "twin/simulation.h"

namespace infereng::testing {

Status SimulateRunDir(const std::string& dir, const std::vector<std::string>& sets, uint64_t seed) {
  INFERENG_ASSIGN_OR_RETURN(card::WorkloadCard card, card::LoadCardFile(SourceDir() + "/examples/chat.yaml"));
  INFERENG_ASSIGN_OR_RETURN(catalog::Catalog cat, catalog::Catalog::Load());
  twin::SetupOptions so;
  so.sets = sets;
  INFERENG_ASSIGN_OR_RETURN(twin::TwinSetup setup, twin::ResolveTwin(card, so, cat));
  std::filesystem::create_directories(dir);
  twin::SimulationOptions o;
  o.duration_s = 40;
  // A quarter of the card's 20 rps (~12 requests in flight): these run dirs stand for
  // replicates and one-knob changes, and `compare`'s bootstrap treats requests as independent.
  // Near the example replica's saturation (utilisation ~1.05 at 20 rps with the catalog
  // defaults) requests share the queue and the batch, so two seeds differ by more than that
  // interval allows (docs/compare.md, "Replicates").
  o.rate_scale = 0.25;
  o.warmup_s = 5;
  o.seed = seed;
  o.exact_percentiles = true;
  o.records_path = dir + "/requests.jsonl";
  INFERENG_ASSIGN_OR_RETURN(twin::SimulationResult sim, twin::RunSimulation(card, setup, o));
  INFERENG_RETURN_IF_ERROR(metrics::WriteSummaryFile(dir + "/summary.json", sim.summary));
  nlohmann::json manifest = {{"card", {{"name", card.name}, {"path", card.source_path}, {"sha256", card.content_hash}}},
                             {"source", "simulated"},
                             {"sets", sets},
                             {"seed", seed}};
  std::ofstream(dir + "/manifest.json") << manifest.dump(2);
  return Status::Ok();
}

}  // namespace infereng::testing
