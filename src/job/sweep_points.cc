#include "job/sweep_points.h"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <memory>
#include <mutex>

#include "job/bench_job.h"
#include "job/embedded_engine.h"
#include "sweep/saturation.h"
#include "sweep/sweep_io.h"

namespace infereng::job {
namespace {

namespace fs = std::filesystem;

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
      sweep::SaturationVerdict v = sweep::DetectSaturation(samples_);
      if (v.saturated) {
        verdict_ = v;
        stop_.store(true);
      }
    }
  }
  const std::atomic<bool>& stop_flag() const { return stop_; }
  std::optional<sweep::SaturationVerdict> verdict() const {
    std::lock_guard<std::mutex> lock(mu_);
    return verdict_;
  }

 private:
  bool enabled_;
  mutable std::mutex mu_;
  std::vector<sweep::LoadSample> samples_;          // guarded by mu_
  std::optional<bench::Progress> last_;      // guarded by mu_
  std::optional<sweep::SaturationVerdict> verdict_; // guarded by mu_
  std::atomic<bool> stop_{false};
};

// Latencies x s, rates / s: wall-time figures of a sped-up engine back to engine time.
void ToEngineTime(sweep::SweepPoint& p, double s) {
  if (s == 1) return;
  for (sweep::Latency* l : {&p.ttft_ms, &p.itl_ms, &p.e2e_ms, &p.tpot_ms}) {
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

}  // namespace

Result<sweep::PointRunner> MakeBenchPointRunner(const sweep::SweepRunOptions& o) {
  const double speedup = sweep::MeasuredSpeedup(o);
  if (!(speedup > 0)) return Status::InvalidArgument("--speedup must be > 0");
  return sweep::PointRunner([o, speedup](double load, int index) -> Result<sweep::SweepPoint> {
    if (o.interrupt && o.interrupt->load()) return Status::Cancelled("interrupted");
    std::string rel = "points/" + sweep::PointDirName(index, load);
    std::string dir = (fs::path(o.out_dir) / rel).string();
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) return Status::IoError(fmt::format("{}: {}", dir, ec.message()));

    bench::BenchOptions opt;
    opt.card = SpedUpCard(o.card, speedup);
    opt.out_dir = dir;
    if (o.kind == sweep::LoadKind::kRate) {
      opt.rate_rps = load * speedup;
    } else {
      opt.concurrency = static_cast<int>(std::lround(load));
    }
    const sweep::PointPlan plan = sweep::MeasuredPointPlan(o);
    opt.duration = SecondsToNanos(plan.window_s);
    opt.warmup = SecondsToNanos(plan.warmup_s);
    opt.cooldown = 0;
    opt.trials = 1;
    opt.scrape_interval = SecondsToNanos(o.scrape_interval_s);
    auto monitor = std::make_shared<ProgressMonitor>(o.early_stop);
    // One flag for both: the user's interrupt and the monitor's early stop.
    auto stop = std::make_shared<std::atomic<bool>>(false);
    opt.on_progress = [monitor, stop, &o](const bench::Progress& p) {
      monitor->OnProgress(p);
      if (monitor->stop_flag().load() || (o.interrupt && o.interrupt->load())) stop->store(true);
    };
    opt.interrupt = stop.get();

    EmbeddedOptions eo;
    eo.speedup = speedup;
    eo.seed = o.card.bench.seed;
    // A fresh engine per point (stopped when `engine` goes out of scope, or just below).
    INFERENG_ASSIGN_OR_RETURN(JobEngine engine, JobEngine::Open(o.target, o.card, eo));
    engine.Apply(&opt);
    if (engine.embedded()) {
      opt.extra_manifest["sweep"] = {{"load", load},
                                     {"unit", sweep::LoadUnit(o.kind)},
                                     {"speedup", speedup},
                                     {"note", speedup == 1 ? "" : "files of this point are in wall time: engine time runs "
                                                                   "`speedup` times faster; SLOs were scaled to match"}};
    } else {
      opt.extra_manifest["sweep"] = {{"load", load}, {"unit", sweep::LoadUnit(o.kind)}};
    }
    Result<bench::BenchResult> res = RunBench(opt);
    engine.Stop();
    if (o.interrupt && o.interrupt->load()) return Status::Cancelled("interrupted by the user");
    if (!res.ok()) return res.status();

    // The summary judged the sped-up card; label its SLOs with the card's own thresholds.
    metrics::Summary engine_view = res->summary;
    for (metrics::SloResult& slo : engine_view.slo) {
      slo.threshold_ms *= speedup;
      slo.value_ms *= speedup;
    }
    for (metrics::ThresholdResult& t : engine_view.goodput_thresholds) t.threshold.threshold_ms *= speedup;
    sweep::SweepPoint p = sweep::PointFromSummary(load, engine_view);
    p.dir = rel;
    if (auto v = monitor->verdict()) {
      p.saturated = true;
      p.stopped_early = true;
      p.saturation_reason = v->reason;
      if (o.log) o.log(fmt::format("load {:.4g}: stopped early, {}", load, v->reason));
    }
    sweep::MarkSaturation(p, res->summary);
    if (res->target_down) return Status::Unavailable(fmt::format("load {}: the target stopped answering", load));
    ToEngineTime(p, speedup);
    return p;
  });
}

}  // namespace infereng::job
