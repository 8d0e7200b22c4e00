#include "sweep/runner.h"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>

#include "catalog/catalog.h"
#include "metrics/summary_json.h"
#include "sweep/saturation.h"
#include "sweep/sweep_io.h"
#include "twin/simulation.h"

namespace infereng::sweep {
namespace {

// --profile: the twin prices steps with the measured table instead of the roofline.
void ApplyMeasuredCost(const SweepRunOptions& o, twin::TwinSetup* setup) {
  if (!o.measured_cost) return;
  setup->cost = o.measured_cost;
  setup->description += ", " + o.measured_label;
}

}  // namespace

namespace {

namespace fs = std::filesystem;

Status WriteJson(const std::string& path, const nlohmann::json& j) {
  std::ofstream out(path, std::ios::trunc);
  if (!out) return Status::IoError(path + ": cannot open for writing");
  out << j.dump(2) << "\n";
  out.close();
  if (!out) return Status::IoError(path + ": write failed");
  return Status::Ok();
}

// One point on the twin: `warmup_s` then `window_s` of arrivals (unset: SimulationOptions'
// defaults from the card), written under `rel` when it is not empty.
Result<SweepPoint> RunTwinPoint(const SweepRunOptions& o, const twin::TwinSetup& setup, double load,
                                const std::string& rel, std::optional<double> duration_s,
                                std::optional<double> warmup_s) {
  const std::string dir = rel.empty() ? "" : (fs::path(o.out_dir) / rel).string();
  if (!dir.empty()) {
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) return Status::IoError(fmt::format("{}: {}", dir, ec.message()));
  }
  twin::SimulationOptions so;
  so.duration_s = duration_s;
  so.warmup_s = warmup_s;
  // The load as the measured point applies it (MakeBenchPointRunner): --rate R alone is
  // open loop at R; --concurrency C alone is a closed loop of C users.
  if (o.kind == LoadKind::kRate) {
    so.rate_rps = load;
  } else {
    so.concurrency = static_cast<int>(std::lround(load));
  }
  so.drain_s = 60;
  so.exact_percentiles = true;
  if (!dir.empty()) so.records_path = dir + "/requests.jsonl";
  INFERENG_ASSIGN_OR_RETURN(twin::SimulationResult sim, twin::RunSimulation(o.card, setup, so));
  if (!dir.empty()) {
    INFERENG_RETURN_IF_ERROR(metrics::WriteSummaryFile(dir + "/summary.json", sim.summary));
    nlohmann::json manifest = {{"card", {{"name", o.card.name}, {"path", o.card.source_path}, {"sha256", o.card.content_hash}}},
                               {"source", "simulated"},
                               {"twin", twin::TwinReportToJson(sim.twin)},
                               {"sweep", {{"load", load}, {"unit", LoadUnit(o.kind)}}},
                               {"sets", o.sets},
                               {"cost_model", o.measured_cost ? o.measured_label : std::string("roofline")}};
    INFERENG_RETURN_IF_ERROR(WriteJson(dir + "/manifest.json", manifest));
  }
  SweepPoint p = PointFromSummary(load, sim.summary);
  p.dir = rel;
  p.source = "simulated";
  MarkSaturation(p, sim.summary);
  if (!p.saturated && sim.twin.queue_growing && sim.twin.utilisation_estimate >= 1.0) {
    p.saturated = true;
    p.saturation_reason = sim.twin.saturation_note.empty() ? "twin: queue still growing at the end of arrivals"
                                                            : sim.twin.saturation_note;
  }
  return p;
}

}  // namespace

void MarkSaturation(SweepPoint& p, const metrics::Summary& s) {
  SaturationVerdict v = DetectSaturation(SamplesFromTimeseries(s.timeseries));
  if (v.saturated && !p.saturated) {
    p.saturated = true;
    p.saturation_reason = v.reason;
  }
}

PointPlan MeasuredPointPlan(const SweepRunOptions& o) {
  const double window = o.point_duration_s.value_or(std::min(o.card.bench.duration_s, 20.0));
  return {.warmup_s = o.warmup_s.value_or(std::min(o.card.bench.warmup_s, window / 5)), .window_s = window};
}

double MeasuredSpeedup(const SweepRunOptions& o) { return o.target.empty() ? o.speedup : 1.0; }

std::string PointDirName(int index, double load) { return fmt::format("{:02}-{:.4g}", index, load); }

std::vector<SloLine> SloLines(const card::WorkloadCard& card) {
  std::vector<SloLine> out;
  for (const card::SloTarget& t : card.slo.latency) out.push_back({t.metric, t.percentile, t.threshold_ms});
  return out;
}

Result<PointRunner> MakeTwinPointRunner(const SweepRunOptions& o) {
  INFERENG_ASSIGN_OR_RETURN(catalog::Catalog cat, catalog::Catalog::Load());
  twin::SetupOptions setup_options;
  setup_options.sets = o.sets;
  INFERENG_ASSIGN_OR_RETURN(twin::TwinSetup setup, twin::ResolveTwin(o.card, setup_options, cat));
  ApplyMeasuredCost(o, &setup);
  auto shared = std::make_shared<twin::TwinSetup>(std::move(setup));
  return PointRunner([o, shared](double load, int index) -> Result<SweepPoint> {
    if (o.interrupt && o.interrupt->load()) return Status::Cancelled("interrupted");
    const std::string rel = o.out_dir.empty() ? "" : "points/" + PointDirName(index, load);
    return RunTwinPoint(o, *shared, load, rel, o.point_duration_s, o.warmup_s);
  });
}

Result<std::vector<SweepPoint>> PredictWithTwin(const SweepRunOptions& o, const std::vector<SweepPoint>& measured) {
  INFERENG_ASSIGN_OR_RETURN(catalog::Catalog cat, catalog::Catalog::Load());
  twin::SetupOptions setup_options;
  setup_options.sets = o.sets;
  INFERENG_ASSIGN_OR_RETURN(twin::TwinSetup setup, twin::ResolveTwin(o.card, setup_options, cat));
  ApplyMeasuredCost(o, &setup);
  // The measured window in engine time: the wall plan times the engine's speed-up, or the
  // point's own (engine-time) window when it was stopped early.
  const double s = MeasuredSpeedup(o);
  const PointPlan plan = MeasuredPointPlan(o);
  SweepRunOptions t = o;
  t.out_dir.clear();  // predictions keep no files
  std::vector<SweepPoint> out;
  for (const SweepPoint& m : measured) {
    if (o.interrupt && o.interrupt->load()) return Status::Cancelled("interrupted");
    const double warmup = plan.warmup_s * s;
    const double window = m.stopped_early && m.window_s > 0 ? m.window_s : plan.window_s * s;
    INFERENG_ASSIGN_OR_RETURN(SweepPoint p, RunTwinPoint(t, setup, m.load, "", warmup + window, warmup));
    p.load = m.load;
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace infereng::sweep
