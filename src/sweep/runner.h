// Point runners for `infereng sweep`: each load point is a full run with its own records
// under OUT/points/<NN>-<load>/ (requests.jsonl, summary.json, manifest.json), so every
// point can be reported, compared and re-analysed on its own.
//
//  - Measured (job::MakeBenchPointRunner, job/sweep_points.h: it runs the bench job, which
//    sits above sweep/): job::RunBench against --target, or against a fresh
//    embedded engine per point (in-process serve::Server driven by the twin, with
//    `speedup`: engine time runs that many times faster than the wall clock). With a
//    speedup S the point is run at S × the rate against S-times-tighter SLOs, and the
//    point's figures are converted back to engine time (latencies × S, rates ÷ S) so the
//    sweep reads in the card's units (window_s included); the per-point files stay in wall
//    time (noted in their manifest and their report). While a point runs, its progress feeds the saturation detector
//    (saturation.h); a saturated point is stopped early and marked.
//  - Simulated (MakeTwinPointRunner): twin::RunSimulation in virtual time (seconds of host
//    time per point), with the load a measured point applies: --by rate = open loop at
//    the rate, --by concurrency = a closed loop of that many users.
//
// Thread-safety: a runner is called from one thread at a time (the search is sequential).
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "card/card.h"
#include "core/status.h"
#include "metrics/summary.h"
#include "sweep/search.h"
#include "twin/cost_model.h"

namespace infereng::sweep {

struct SweepRunOptions {
  card::WorkloadCard card;
  LoadKind kind = LoadKind::kRate;
  std::string out_dir;                    // points go to out_dir/points/
  std::string target;                     // measured: URL; "" = embedded engine
  double speedup = 4;                     // embedded engine only
  std::optional<double> point_duration_s; // measurement window per point (wall; virtual for the twin)
  std::optional<double> warmup_s;
  std::vector<std::string> sets;          // twin overrides ("engine.max_num_seqs=64")
  // A measured cost model (--profile) for the twin's points and predictions;
  // `measured_label` ("measured profile PATH") goes into the twin's description.
  std::shared_ptr<const twin::CostModel> measured_cost;
  std::string measured_label;
  bool early_stop = true;                 // stop a point once it is clearly saturated
  double scrape_interval_s = 1;           // measured: /metrics into each point's engine_metrics.jsonl; 0 = off
  const std::atomic<bool>* interrupt = nullptr;  // user interrupt: the sweep stops
  std::function<void(const std::string&)> log;   // one line per event (may be empty)
};

// Directory name of point `index` at `load`: "03-12.5".
std::string PointDirName(int index, double load);

Result<PointRunner> MakeTwinPointRunner(const SweepRunOptions& options);

// The twin's prediction of each measured point (no directories), for "predicted vs
// measured" curves: the same load over the same window in engine time — the point's warm-up
// and window times the embedded engine's speed-up (a point stopped early: its own, shorter
// window). Errors (e.g. the card's model is not in the catalog) come back as a Status:
// callers treat the prediction as optional.
Result<std::vector<SweepPoint>> PredictWithTwin(const SweepRunOptions& options, const std::vector<SweepPoint>& measured);

// A measured point's warm-up and measurement window, wall seconds (the bench's plan).
struct PointPlan {
  double warmup_s = 0;
  double window_s = 0;
};
PointPlan MeasuredPointPlan(const SweepRunOptions& options);

// The engine's speed-up over the wall clock in a measured point (1 against --target).
double MeasuredSpeedup(const SweepRunOptions& options);

// Marks `p` saturated when the time series of its summary shows it (saturation.h).
void MarkSaturation(SweepPoint& p, const metrics::Summary& s);

// The card's latency SLOs as chart lines.
std::vector<SloLine> SloLines(const card::WorkloadCard& card);

}  // namespace infereng::sweep
