#include "sweep/runner.h"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>

#include "bench/bench_session.h"
#include "bench/embedded.h"
#include "catalog/catalog.h"
#include "metrics/summary_json.h"
#include "sweep/saturation.h"
#include "sweep/sweep_io.h"
#include "twin/simulation.h"

namespace infereng::sweep {
namespace {

namespace fs = std::filesystem;

void Log(const SweepRunOptions& o, const std::string& line) {
  if (o.log) o.log(line);
}

// Collects the measure-phase progress of one bench point and decides when it is doomed.
class ProgressMonitor {
 public:
  explicit ProgressMonitor(bool enabled) : enabled_(enabled) {}

  // Called from the bench watcher thread about once a second.
  void OnProgress(const bench::Progress& p) {
    std::lock_guard<std::mutex> lock(mu_);
    if (p.phase != "measure") {
      last_ = p;
      return;
    }
    if (last_) {
      double dt = p.elapsed_s - last_->elapsed_s;
      if (dt > 0) {
        samples_.push_back({.t_s = last_->elapsed_s,
                            .width_s = dt,
                            .sent = static_cast<double>(p.issued - last_->issued),
                            .completed = static_cast<double>(p.finished - last_->finished),
                            .in_flight = static_cast<double>(p.in_flight),
                            .ttft_ms = -1});
      }
    }
    last_ = p;
    if (enabled_ && !stop_.load() && samples_.size() >= 8) {
      SaturationVerdict v = DetectSaturation(samples_);
      if (v.saturated) {
        verdict_ = v;
        stop_.store(true);
      }
    }
  }
  const std::atomic<bool>& stop_flag() const { return stop_; }
  std::optional<SaturationVerdict> verdict() const {
    std::lock_guard<std::mutex> lock(mu_);
    return verdict_;
  }

 private:
  bool enabled_;
  mutable std::mutex mu_;
  std::vector<LoadSample> samples_;          // guarded by mu_
  std::optional<bench::Progress> last_;      // guarded by mu_
  std::optional<SaturationVerdict> verdict_; // guarded by mu_
  std::atomic<bool> stop_{false};
};

// Latencies x s, rates / s: wall-time figures of a sped-up engine back to engine time.
void ToEngineTime(SweepPoint& p, double s) {
  if (s == 1) return;
  for (Latency* l : {&p.ttft_ms, &p.itl_ms, &p.e2e_ms, &p.tpot_ms}) {
    l->p50 *= s;
    l->p90 *= s;
    l->p95 *= s;
    l->p99 *= s;
  }
  p.offered_rps /= s;
  p.throughput_rps /= s;
  p.output_tok_s /= s;
  p.goodput_rps /= s;
  p.window_s *= s;
}

// The card as the wall clock sees a sped-up engine: SLOs and timeouts s times tighter.
card::WorkloadCard SpedUpCard(card::WorkloadCard card, double s) {
  if (s == 1) return card;
  // Defaulted per-request thresholds follow the objectives; written ones scale here.
  for (card::SloTarget& t : card.slo.latency) t.threshold_ms /= s;
  for (card::RequestThreshold& t : card.slo.goodput) t.threshold_ms /= s;
  if (card.slo.min_output_tokens_per_s) *card.slo.min_output_tokens_per_s *= s;
  card.product.timeout_s /= s;
  return card;
}

Status WriteJson(const std::string& path, const nlohmann::json& j) {
  std::ofstream out(path, std::ios::trunc);
  if (!out) return Status::IoError(path + ": cannot open for writing");
  out << j.dump(2) << "\n";
  out.close();
  if (!out) return Status::IoError(path + ": write failed");
  return Status::Ok();
}

void MarkSaturation(SweepPoint& p, const metrics::Summary& s) {
  SaturationVerdict v = DetectSaturation(SamplesFromTimeseries(s.timeseries));
  if (v.saturated && !p.saturated) {
    p.saturated = true;
    p.saturation_reason = v.reason;
  }
}

// A measured point's warm-up and measurement window, wall seconds (the bench's plan).
struct PointPlan {
  double warmup_s = 0;
  double window_s = 0;
};
PointPlan MeasuredPointPlan(const SweepRunOptions& o) {
  const double window = o.point_duration_s.value_or(std::min(o.card.bench.duration_s, 20.0));
  return {.warmup_s = o.warmup_s.value_or(std::min(o.card.bench.warmup_s, window / 5)), .window_s = window};
}

// The engine's speed-up over the wall clock in a measured point (1 against --target).
double MeasuredSpeedup(const SweepRunOptions& o) { return o.target.empty() ? o.speedup : 1.0; }

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
                               {"sets", o.sets}};
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

std::string PointDirName(int index, double load) { return fmt::format("{:02}-{:.4g}", index, load); }

std::vector<SloLine> SloLines(const card::WorkloadCard& card) {
  std::vector<SloLine> out;
  for (const card::SloTarget& t : card.slo.latency) out.push_back({t.metric, t.percentile, t.threshold_ms});
  return out;
}

Result<PointRunner> MakeBenchPointRunner(const SweepRunOptions& o) {
  const double speedup = MeasuredSpeedup(o);
  if (!(speedup > 0)) return Status::InvalidArgument("--speedup must be > 0");
  return PointRunner([o, speedup](double load, int index) -> Result<SweepPoint> {
    if (o.interrupt && o.interrupt->load()) return Status::Cancelled("interrupted");
    std::string rel = "points/" + PointDirName(index, load);
    std::string dir = (fs::path(o.out_dir) / rel).string();
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) return Status::IoError(fmt::format("{}: {}", dir, ec.message()));

    bench::BenchOptions opt;
    opt.card = SpedUpCard(o.card, speedup);
    opt.out_dir = dir;
    if (o.kind == LoadKind::kRate) {
      opt.rate_rps = load * speedup;
    } else {
      opt.concurrency = static_cast<int>(std::lround(load));
    }
    const PointPlan plan = MeasuredPointPlan(o);
    opt.duration = SecondsToNanos(plan.window_s);
    opt.warmup = SecondsToNanos(plan.warmup_s);
    opt.cooldown = 0;
    opt.trials = 1;
    auto monitor = std::make_shared<ProgressMonitor>(o.early_stop);
    // One flag for both: the user's interrupt and the monitor's early stop.
    auto stop = std::make_shared<std::atomic<bool>>(false);
    opt.on_progress = [monitor, stop, &o](const bench::Progress& p) {
      monitor->OnProgress(p);
      if (monitor->stop_flag().load() || (o.interrupt && o.interrupt->load())) stop->store(true);
    };
    opt.interrupt = stop.get();

    bench::Embedded embedded;
    if (o.target.empty()) {
      bench::EmbeddedOptions eo;
      eo.speedup = speedup;
      eo.seed = o.card.bench.seed;
      INFERENG_ASSIGN_OR_RETURN(embedded, bench::StartEmbedded(o.card, eo));
      opt.target = embedded.url;
      opt.extra_manifest = embedded.manifest;
      opt.extra_manifest["sweep"] = {{"load", load},
                                     {"unit", LoadUnit(o.kind)},
                                     {"speedup", speedup},
                                     {"note", speedup == 1 ? "" : "files of this point are in wall time: engine time runs "
                                                                   "`speedup` times faster; SLOs were scaled to match"}};
    } else {
      opt.target = o.target;
      opt.extra_manifest["sweep"] = {{"load", load}, {"unit", LoadUnit(o.kind)}};
    }
    Result<bench::BenchResult> res = bench::RunBench(opt);
    if (embedded.server) embedded.server->Stop();
    if (o.interrupt && o.interrupt->load()) return Status::Cancelled("interrupted by the user");
    if (!res.ok()) return res.status();

    // The summary judged the sped-up card; label its SLOs with the card's own thresholds.
    metrics::Summary engine_view = res->summary;
    for (metrics::SloResult& slo : engine_view.slo) {
      slo.threshold_ms *= speedup;
      slo.value_ms *= speedup;
    }
    for (metrics::ThresholdResult& t : engine_view.goodput_thresholds) t.threshold.threshold_ms *= speedup;
    SweepPoint p = PointFromSummary(load, engine_view);
    p.dir = rel;
    if (auto v = monitor->verdict()) {
      p.saturated = true;
      p.stopped_early = true;
      p.saturation_reason = v->reason;
      Log(o, fmt::format("load {:.4g}: stopped early, {}", load, v->reason));
    }
    MarkSaturation(p, res->summary);
    if (res->target_down) return Status::Unavailable(fmt::format("load {}: the target stopped answering", load));
    ToEngineTime(p, speedup);
    return p;
  });
}

Result<PointRunner> MakeTwinPointRunner(const SweepRunOptions& o) {
  INFERENG_ASSIGN_OR_RETURN(catalog::Catalog cat, catalog::Catalog::Load());
  twin::SetupOptions setup_options;
  setup_options.sets = o.sets;
  INFERENG_ASSIGN_OR_RETURN(twin::TwinSetup setup, twin::ResolveTwin(o.card, setup_options, cat));
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
