// `infereng calibrate INPUT... --card FILE [--out FILE]`: fit the roofline's parameters and
// the per-request front-end cost to measurements (job/calibrate.h). INPUT is a profile file
// (`infereng profile`) or a run directory (its requests.jsonl, job/calibrate_runs.h).
// Prints each parameter with its standard error (or why the data cannot identify it) and
// the `--set` lines to paste; writes a calibrated profile usable with --profile.
// Exit 0 written, 2 bad input (file, card, no usable points).
#include <cmath>
#include <cstdio>
#include <optional>
#include <filesystem>

#include "catalog/catalog.h"
#include "cli/cli_util.h"
#include "cli/exit_codes.h"
#include "infereng/version_info.h"
#include "job/calibrate.h"
#include "job/calibrate_runs.h"
#include "job/calibrate_scale.h"
#include "cli/profile_flag.h"
#include "job/profile_fit.h"
#include "twin/setup.h"

namespace infereng::cli {

namespace {

// Points of one input: a run directory or a profile file (its provenance and KV capacity
// carried into `out`, the first profile's); errors name the input.
Result<std::vector<twin::ProfilePoint>> InputPoints(const std::string& input, twin::ProfileFile* out) {
  std::error_code ec;
  if (std::filesystem::is_directory(input, ec)) return job::PointsFromRunDir(input);
  auto p = twin::LoadProfile(input);
  if (!p.ok()) return p.status();
  if (out->provenance.target.empty()) out->provenance = p->provenance;
  if (!out->kv_capacity_tokens) out->kv_capacity_tokens = p->kv_capacity_tokens;
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
  // The profiles' own points (isolated steps) make the measured table; a run's points
  // (TTFTs with their queueing, decode steps with other requests' prefills in them) would
  // put into the table what the twin adds again when it replays the load, so they calibrate
  // the roofline and, below, the table's level only.
  twin::ProfileFile table_source;
  for (const std::string& in : inputs) {
    auto pts = InputPoints(in, &p);
    if (!pts.ok()) return ReportError(io, "calibrate", pts.status());
    p.points.insert(p.points.end(), pts->begin(), pts->end());
    std::error_code ec;
    if (!std::filesystem::is_directory(in, ec)) {
      table_source.points.insert(table_source.points.end(), pts->begin(), pts->end());
    }
    p.notes.push_back("input " + in + ": " + std::to_string(pts->size()) + " points");
  }
  const twin::EngineConfig& engine = setup->settings.engine;
  auto cal = job::CalibrateRoofline(*setup->deployment, p.points,
                                    job::EngineHost{.step_s = engine.step_overhead_s, .seq_s = engine.seq_overhead_s});
  if (!cal.ok()) return ReportError(io, "calibrate", cal.status());
  const bool from_profile = !table_source.points.empty();
  if (from_profile) {
    if (Status st = job::FitProfile(&table_source); !st.ok()) return ReportError(io, "calibrate", st);
    p.table = table_source.table;
    p.fit_rms_rel_error = table_source.fit_rms_rel_error;
    p.fit_max_rel_error = table_source.fit_max_rel_error;
    p.notes.insert(p.notes.end(), table_source.notes.begin(), table_source.notes.end());
  } else if (Status st = job::FitProfile(&p); !st.ok()) {
    return ReportError(io, "calibrate", st);
  }
  p.calibrated = cal->params;
  p.provenance.infereng_version = build::kVersion;
  // With a profile's table and runs of real traffic: the table's level from re-simulating
  // each run's own schedule (job/calibrate_scale.h), under the same --set keys.
  std::vector<std::string> runs;
  for (const std::string& in : inputs) {
    std::error_code ec;
    if (std::filesystem::is_directory(in, ec)) runs.push_back(in);
  }
  std::optional<job::TableScaleFit> scale;
  if (from_profile && !runs.empty()) {
    twin::SetupOptions so2;
    so2.sets = sets;
    const MeasuredProfile measured = ProfileForTwin(p, out, &so2.sets);
    auto s2 = twin::ResolveTwin(*card, so2, *cat);
    if (!s2.ok()) return ReportError(io, "calibrate", s2.status());
    ApplyProfile(measured, &*s2);
    auto fit = job::FitTableScale(*card, *s2, runs, out + ".replay");
    std::error_code ec;
    std::filesystem::remove_all(out + ".replay", ec);
    if (!fit.ok()) return ReportError(io, "calibrate", fit.status());
    scale = *fit;
    for (const std::string& n : fit->notes) p.notes.push_back(n);
    if (fit->ok) {
      job::ScaleTable(&p.table, fit->scale);
      p.calibrated.push_back({.key = "table_scale", .value = fit->scale, .stderr_ = fit->scale * fit->spread,
                              .identified = true,
                              .note = "the measured table's step times x this, from re-simulating " +
                                      std::to_string(fit->runs.size()) + " run(s)"});
    }
  }
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
    if (f.identified && (f.key.starts_with("cost.") || f.key.starts_with("engine."))) {
      std::snprintf(line, sizeof line, " --set %s=%.4g", f.key.c_str(), f.value);
      io.out << line;
    }
  }
  if (scale) {
    io.out << "\n";
    for (const job::RunScale& r : scale->runs) {
      std::snprintf(line, sizeof line, "  table scale %.3f from %s: TPOT P50 measured %.2f ms, replayed %.2f ms at 1, %.2f ms at %.3f\n",
                    r.scale, r.run.c_str(), r.measured_tpot_ms, r.simulated_tpot_ms_before, r.simulated_tpot_ms_after, r.scale);
      io.out << line;
    }
    for (const std::string& n : scale->notes) io.out << "  note: " << n << "\n";
    if (scale->ok) {
      std::snprintf(line, sizeof line, "  the measured table's step times x %.3f (runs agree within %.1f%%)\n", scale->scale,
                    100 * (std::exp(scale->spread) - 1));
      io.out << line;
    }
  }
  io.out << "\nwrote " << out << " (its measured table: --profile " << out << ")\n";
  return kExitOk;
}

}  // namespace infereng::cli
