// `infereng calibrate INPUT... --card FILE [--out FILE]`: fit the roofline's parameters and
// the per-request front-end cost to measurements (job/calibrate.h). INPUT is a profile file
// (`infereng profile`) or a run directory (its requests.jsonl, job/calibrate_runs.h).
// Prints each parameter with its standard error (or why the data cannot identify it) and
// the `--set` lines to paste; writes a calibrated profile usable with --profile.
// Exit 0 written, 2 bad input (file, card, no usable points).
#include <cstdio>
#include <filesystem>

#include "catalog/catalog.h"
#include "cli/cli_util.h"
#include "cli/exit_codes.h"
#include "infereng/version_info.h"
#include "job/calibrate.h"
#include "job/calibrate_runs.h"
#include "job/profile_fit.h"
#include "twin/setup.h"

namespace infereng::cli {

namespace {

// Points of one input: a run directory or a profile file; errors name the input.
Result<std::vector<twin::ProfilePoint>> InputPoints(const std::string& input, twin::ProfileProvenance* prov) {
  std::error_code ec;
  if (std::filesystem::is_directory(input, ec)) return job::PointsFromRunDir(input);
  auto p = twin::LoadProfile(input);
  if (!p.ok()) return p.status();
  if (prov->target.empty()) *prov = p->provenance;
  return p->points;
}

}  // namespace

int RunCalibrate(int argc, const char* const* argv, CommandIo& io) {
  CLI::App app("Fit the twin's cost parameters to profiles or measured runs, with uncertainty", argv[0]);
  std::vector<std::string> inputs, sets;
  std::string card_path, out = "calibrated.json";
  app.add_option("inputs", inputs, "Profile files (infereng profile) or run directories (requests.jsonl)")->required();
  app.add_option("--card", card_path, "Workload card: the model and accelerator the roofline prices steps on")->required();
  app.add_option("--set", sets, "Start from these knobs (cost.KEY=VALUE), as simulate --set");
  app.add_option("--out", out, "Calibrated profile to write");
  if (int rc = ParseArgs(app, argc, argv, io); rc >= 0) return rc;

  auto card = LoadCard(card_path, io);
  if (!card.ok()) return ReportError(io, "calibrate", card.status());
  auto cat = catalog::Catalog::Load();
  if (!cat.ok()) return ReportError(io, "calibrate", cat.status());
  twin::SetupOptions so;
  so.sets = sets;
  auto setup = twin::ResolveTwin(*card, so, *cat);
  if (!setup.ok()) return ReportError(io, "calibrate", setup.status());
  if (!setup->deployment) return ReportError(io, "calibrate", Status::InvalidArgument("--card: the twin has no roofline deployment"));

  twin::ProfileFile p;
  for (const std::string& in : inputs) {
    auto pts = InputPoints(in, &p.provenance);
    if (!pts.ok()) return ReportError(io, "calibrate", pts.status());
    p.points.insert(p.points.end(), pts->begin(), pts->end());
    p.notes.push_back("input " + in + ": " + std::to_string(pts->size()) + " points");
  }
  auto cal = job::CalibrateRoofline(*setup->deployment, p.points);
  if (!cal.ok()) return ReportError(io, "calibrate", cal.status());
  if (Status st = job::FitProfile(&p); !st.ok()) return ReportError(io, "calibrate", st);
  p.calibrated = cal->params;
  p.provenance.infereng_version = build::kVersion;
  if (Status st = twin::SaveProfile(p, out); !st.ok()) return ReportError(io, "calibrate", st);

  char line[320];
  io.out << "infereng calibrate: " << cal->points << " points, roofline of " << setup->description << "\n";
  for (const twin::FittedParam& f : cal->params) {
    std::snprintf(line, sizeof line, "  %-22s %-12.6g +- %-10.3g %s\n", f.key.c_str(), f.value, f.stderr_,
                  f.identified ? "" : f.note.c_str());
    io.out << line;
  }
  std::snprintf(line, sizeof line, "  rms relative error: %.1f%% with the card's parameters, %.1f%% calibrated\n",
                100 * cal->rms_rel_error_before, 100 * cal->rms_rel_error_after);
  io.out << line;
  io.out << "  --set lines:";
  for (const twin::FittedParam& f : cal->params) {
    if (f.identified && f.key.starts_with("cost.")) {
      std::snprintf(line, sizeof line, " --set %s=%.4g", f.key.c_str(), f.value);
      io.out << line;
    }
  }
  io.out << "\nwrote " << out << " (its measured table: --profile " << out << ")\n";
  return kExitOk;
}

}  // namespace infereng::cli
