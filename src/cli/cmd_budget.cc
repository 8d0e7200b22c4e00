// `infereng budget --card CARD`: each latency objective split into network, pre-processing,
// queueing, prefill, decode and post-processing (the card's fixed parts and the twin at the
// card's load), the headroom left, and the limits that follow (job/budget.h). Exit 1 when
// an objective is over budget, 2 on bad input.
#include <optional>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "cli/cli_util.h"
#include "cli/exit_codes.h"
#include "core/units.h"
#include "job/budget.h"
#include "twin/setup.h"

namespace infereng::cli {

int RunBudget(int argc, const char* const* argv, CommandIo& io) {
  CLI::App app("Split each latency SLO of a card into the parts that spend it (card + twin at the card's load)",
               argv[0]);
  std::string card_path, duration;
  std::vector<std::string> sets;
  bool json = false, no_search = false;
  app.add_option("--card", card_path, "Workload card (YAML)")->required();
  app.add_option("--set", sets, "Override a twin knob: engine.KEY=VALUE, cluster.KEY=VALUE or cost.KEY=VALUE");
  app.add_option("--duration", duration, "Simulated window (default: the card's bench.duration, at most 2m)");
  app.add_flag("--no-load-search", no_search, "Skip the search for the load where queueing uses up the budget");
  app.add_flag("--json", json, "Print JSON instead of the table");
  if (int rc = ParseArgs(app, argc, argv, io); rc >= 0) return rc;

  auto card = LoadCard(card_path, io);
  if (!card.ok()) return ReportError(io, "budget", card.status());
  job::BudgetOptions opt;
  opt.search_load = !no_search;
  if (!duration.empty()) {
    auto d = units::ParsePositiveDurationSeconds(duration, "s");
    if (!d.ok()) return ReportError(io, "budget", d.status().WithContext("--duration"));
    opt.duration_s = *d;
  }
  auto cat = catalog::Catalog::Load();
  if (!cat.ok()) return ReportError(io, "budget", cat.status());
  twin::SetupOptions so;
  so.sets = sets;
  auto setup = twin::ResolveTwin(*card, so, *cat);
  if (!setup.ok()) return ReportError(io, "budget", setup.status());
  auto b = job::BuildBudget(*card, *setup, opt);
  if (!b.ok()) return ReportError(io, "budget", b.status());
  if (json) {
    io.out << job::BudgetToJson(*b).dump(2) << "\n";
  } else {
    io.out << job::BudgetText(*b);
  }
  for (const job::BudgetLine& l : b->lines) {
    if (!l.pass) return kExitCheckFailed;
  }
  return kExitOk;
}

}  // namespace infereng::cli
