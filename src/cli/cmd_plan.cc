// `infereng plan CARD [--run DIR] [--out DIR] [--json]`: the seed's response format for a
// card (job/plan.h): assumptions, goals and baseline, bottleneck hypotheses, ranked
// experiments evaluated on the twin, acceptance criteria and rollout. Writes plan.md,
// plan.html and plan.json; prints a short summary (or plan.json with --json).
// Exit codes: 0 planned, 2 bad card or --run directory (named), 3 the files could not be written.
#include <string>

#include "cli/cli_util.h"
#include "cli/exit_codes.h"
#include "cli/output_dir.h"
#include "core/units.h"
#include "job/plan.h"
#include "job/plan_report.h"

namespace infereng::cli {

int RunPlan(int argc, const char* const* argv, CommandIo& io) {
  CLI::App app("Plan the next experiments for a card: assumptions, goals and baseline, bottleneck hypotheses, "
               "ranked one-variable experiments evaluated on the twin, acceptance criteria and rollout",
               argv[0]);
  std::string card_path, run_dir, out, duration;
  bool json = false;
  app.add_option("card,--card", card_path, "Workload card (YAML)")->required();
  app.add_option("--run", run_dir,
                 "A measured run directory of this card (bench/run): its summary is the baseline and diagnose's "
                 "hypotheses are section 3 (default: the twin's prediction)");
  app.add_option("--out", out, "Write plan.md, plan.html and plan.json here (default: plans/<card>-<time>)");
  app.add_option("--duration", duration,
                 "Simulated window of the baseline and of each experiment (default: the card's bench.duration, at most 2m)");
  app.add_flag("--json", json, "Print plan.json instead of the summary");
  if (int rc = ParseArgs(app, argc, argv, io); rc >= 0) return rc;

  auto card = LoadCard(card_path, io);
  if (!card.ok()) return ReportError(io, "plan", card.status());
  job::PlanOptions opt;
  opt.run_dir = run_dir;
  if (!duration.empty()) {
    auto d = units::ParsePositiveDurationSeconds(duration, "s");
    if (!d.ok()) return ReportError(io, "plan", d.status().WithContext("--duration"));
    opt.max_duration_s = *d;
  }
  auto plan = job::BuildPlan(*card, opt);
  if (!plan.ok()) return ReportError(io, "plan", plan.status());
  if (out.empty()) out = TimestampedOutputDir("plans/", card->name, "plan");
  if (Status s = job::WritePlanFiles(*plan, out); !s.ok()) return ReportError(io, "plan", s);
  if (json) {
    io.out << job::PlanToJson(*plan).dump(2) << "\n";
  } else {
    io.out << job::PlanSummaryText(*plan);
    io.out << "wrote " << out << "/plan.md, plan.html, plan.json\n";
  }
  return kExitOk;
}

}  // namespace infereng::cli
