// The load-sweep search: which loads to run and what they mean. Pure logic over a
// PointRunner callback, so it is tested with a fake runner and shared by `sweep` against a
// live target, the embedded engine and the twin (--simulate).
//
// Search mode:
//  1. Probe: from start_load, multiply by `growth` until a point is saturated (in-point
//     detector, or achieved throughput below offered by more than the tolerance, or — for
//     concurrency — throughput no longer growing) or max_load is reached. If the first
//     load already misses the SLO, probe downward (÷ growth) until one passes.
//  2. Bisect on the SLO-attainment margin (attainment - target) between the highest passing
//     and the lowest failing load: the next load interpolates the margin linearly
//     (regula falsi), clamped to the middle half of the bracket so it always shrinks by at
//     least a quarter. Stops when the bracket is within `tolerance` (relative), or 1 for
//     concurrency, or the point budget is spent.
// Saturated points count as failing the SLO: their latency grows for as long as they run.
// Fixed mode runs exactly the given loads in order and analyses them the same way.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/status.h"
#include "sweep/point.h"

namespace infereng::sweep {

// Runs one load point; `index` numbers points in the order run (for directory names).
using PointRunner = std::function<Result<SweepPoint>(double load, int index)>;

struct SearchOptions {
  LoadKind kind = LoadKind::kRate;
  std::vector<double> fixed_points{};  // non-empty: fixed mode
  double start_load = 1;
  double growth = 2;
  double max_load = 1e6;
  double min_load = 1e-3;
  int max_points = 12;
  double tolerance = 0.05;           // bisection stops when (hi - lo) / lo <= tolerance
  double throughput_tolerance = 0.10;  // achieved < offered × (1 - this) → saturated
  double attainment_target = 0.99;
};

// Called after each point (progress lines in the terminal); may be empty.
using PointObserver = std::function<void(const SweepPoint&)>;

Result<SweepResult> RunSweepSearch(const SearchOptions& options, const PointRunner& run,
                                   const PointObserver& observe = {});

// Fills knee, saturation_load, max_throughput_rps, max_goodput and binding_slo from the
// points (sorted by load here). Used by the search and when re-reading sweep.json.
void AnalyzeSweep(SweepResult& result, double throughput_tolerance = 0.10);

// True when the point counts as saturated for the search: the in-point detector said so,
// or (rate) achieved throughput fell short of the offered rate by more than the tolerance
// in a window long enough (>= 5 median E2E latencies) for that comparison to mean something.
bool PointSaturated(const SweepPoint& p, LoadKind kind, double throughput_tolerance);

}  // namespace infereng::sweep
