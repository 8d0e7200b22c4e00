#include "sweep/search.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace infereng::sweep {
namespace {

// Concurrency b is past the knee when doubling-style growth from a to b bought less than
// 20% of the proportional throughput gain.
constexpr double kPlateauShare = 0.2;

bool Plateau(const SweepPoint& a, const SweepPoint& b) {
  if (a.load <= 0 || b.load <= a.load || a.throughput_rps <= 0) return false;
  double ideal = b.load / a.load - 1;
  double actual = b.throughput_rps / a.throughput_rps - 1;
  return actual < kPlateauShare * ideal;
}

bool Passes(const SweepPoint& p, LoadKind kind, double tol) {
  return p.slo_pass && p.attainment >= p.attainment_target && !PointSaturated(p, kind, tol);
}

double RoundLoad(double load, LoadKind kind) {
  if (kind == LoadKind::kConcurrency) return std::max(1.0, std::round(load));
  // Rates keep 3 significant digits so directory names and tables stay readable.
  double mag = std::pow(10.0, std::floor(std::log10(load)) - 2);
  return std::round(load / mag) * mag;
}

struct Bracket {
  const SweepPoint* lo = nullptr;  // highest passing load with no failing load below it
  const SweepPoint* hi = nullptr;  // lowest failing load above lo
};

Bracket FindBracket(const std::vector<SweepPoint>& sorted, LoadKind kind, double tol) {
  Bracket b;
  for (const SweepPoint& p : sorted) {
    if (Passes(p, kind, tol)) {
      b.lo = &p;
    } else {
      b.hi = &p;
      break;
    }
  }
  return b;
}

// What fails first at `f`, the lowest failing load: the objective furthest past its
// threshold; else (attainment failed) errors or the per-request threshold met least;
// else saturation. Sweeps written before objectives were kept fall back to the shares.
std::string BindingSlo(const SweepPoint& f, LoadKind kind, double tol) {
  const ObjectiveCheck* worst = nullptr;
  for (const ObjectiveCheck& o : f.objectives) {
    if (!o.pass && (worst == nullptr || o.Excess() > worst->Excess())) worst = &o;
  }
  if (worst != nullptr) {
    if (worst->samples == 0) return worst->label + " (n/a: no samples)";
    return fmt::format("{} (measured {:.4g}{})", worst->label, worst->value, worst->floor ? " tok/s" : " ms");
  }
  const bool attainment_failed = f.attainment < f.attainment_target;
  std::string binding;
  double least = 2;
  for (const auto& [name, share] : f.slo_met_share) {
    if (share < least) {
      least = share;
      binding = name;
    }
  }
  const double ok_share = f.requests > 0 ? 1 - static_cast<double>(f.errors) / static_cast<double>(f.requests) : 1;
  if (f.errors > 0 && ok_share < least) return fmt::format("errors ({} of {} requests failed)", f.errors, f.requests);
  if (!binding.empty() && (attainment_failed || f.objectives.empty())) {
    return fmt::format("attainment: {} met by {:.1f}% (target {:.4g}%)", binding, least * 100, f.attainment_target * 100);
  }
  if (PointSaturated(f, kind, tol)) return "capacity (saturated before any objective failed)";
  return "attainment";
}

}  // namespace

const char* LoadKindName(LoadKind k) { return k == LoadKind::kRate ? "rate" : "concurrency"; }
const char* LoadUnit(LoadKind k) { return k == LoadKind::kRate ? "req/s" : "concurrent"; }

bool PointSaturated(const SweepPoint& p, LoadKind kind, double tol) {
  if (p.saturated) return true;
  if (kind == LoadKind::kRate) {
    // Throughput counts completions inside the window, so a window only a few request
    // latencies long undercounts even a healthy server: trust the shortfall only when the
    // window is at least 5 median E2E latencies (or unknown, e.g. hand-made points).
    double e2e_s = p.e2e_ms.count > 0 ? p.e2e_ms.p50 / 1000 : 0;
    if (p.window_s > 0 && p.window_s < 5 * e2e_s) return false;
    double offered = p.offered_rps > 0 ? p.offered_rps : p.load;
    return offered > 0 && p.throughput_rps < offered * (1 - tol);
  }
  return false;
}

void AnalyzeSweep(SweepResult& r, double tol) {
  std::sort(r.points.begin(), r.points.end(), [](const SweepPoint& a, const SweepPoint& b) { return a.load < b.load; });
  r.knee.reset();
  r.saturation_load.reset();
  r.max_goodput.reset();
  r.binding_slo.clear();
  r.max_throughput_rps = 0;
  for (std::size_t i = 0; i < r.points.size(); ++i) {
    const SweepPoint& p = r.points[i];
    r.max_throughput_rps = std::max(r.max_throughput_rps, p.throughput_rps);
    bool sat = PointSaturated(p, r.kind, tol) || (r.kind == LoadKind::kConcurrency && i > 0 && Plateau(r.points[i - 1], p));
    if (sat && !r.saturation_load) {
      r.saturation_load = p.load;
      if (i > 0) r.knee = i - 1;
    }
  }
  Bracket b = FindBracket(r.points, r.kind, tol);
  if (b.lo) r.max_goodput = static_cast<std::size_t>(b.lo - r.points.data());
  if (b.hi) r.binding_slo = BindingSlo(*b.hi, r.kind, tol);
  r.notes.erase(std::remove_if(r.notes.begin(), r.notes.end(),
                               [](const std::string& n) { return n.rfind("analysis: ", 0) == 0; }),
                r.notes.end());
  if (!r.points.empty() && !r.saturation_load) r.notes.push_back("analysis: saturation not reached at the highest load run");
  if (!r.points.empty() && !r.max_goodput) r.notes.push_back("analysis: no load met the SLO attainment target");
}

Result<SweepResult> RunSweepSearch(const SearchOptions& o, const PointRunner& run, const PointObserver& observe) {
  if (o.max_points < 1) return Status::InvalidArgument("sweep: --max-points must be at least 1");
  if (!(o.growth > 1)) return Status::InvalidArgument("sweep: growth factor must be > 1");
  if (!(o.start_load > 0)) return Status::InvalidArgument("sweep: the start load must be > 0");
  for (double l : o.fixed_points) {
    if (!(l > 0) || !std::isfinite(l)) return Status::InvalidArgument(fmt::format("sweep: --points: load {} must be > 0", l));
  }
  SweepResult r;
  r.kind = o.kind;
  r.attainment_target = o.attainment_target;
  int index = 0;
  bool failed = false;
  // Runs `load` unless it already ran; returns the point or nullptr after a failure.
  auto run_one = [&](double load) -> const SweepPoint* {
    for (const SweepPoint& p : r.points) {
      if (std::abs(p.load - load) <= 1e-9 * std::max(1.0, load)) return &p;
    }
    Result<SweepPoint> p = run(load, index++);
    if (!p.ok() && p.status().code() == Status::Code::kCancelled) {
      // The user's interrupt: the sweep ends partial, not failed; the cut point is dropped.
      r.partial = true;
      r.stop_reason = fmt::format("interrupted by the user during load {:.4g} (that point is not counted)", load);
      failed = true;
      return nullptr;
    }
    if (!p.ok()) {
      r.error = fmt::format("load {}: {}", load, p.status().ToString());
      r.stop_reason = "a point failed to run";
      failed = true;
      return nullptr;
    }
    p->load = load;
    if (observe) observe(*p);
    r.points.push_back(std::move(*p));
    return &r.points.back();
  };
  auto budget_left = [&] { return !failed && index < o.max_points; };

  if (!o.fixed_points.empty()) {
    for (double l : o.fixed_points) {
      if (!budget_left()) break;
      run_one(o.kind == LoadKind::kConcurrency ? RoundLoad(l, o.kind) : l);
    }
    if (!failed) r.stop_reason = "ran the fixed list of points";
    AnalyzeSweep(r, o.throughput_tolerance);
    return r;
  }

  // 1. Probe upward until saturation.
  double load = RoundLoad(o.start_load, o.kind);
  std::optional<SweepPoint> prev;
  while (budget_left()) {
    const SweepPoint* p = run_one(load);
    if (!p) break;
    bool sat = PointSaturated(*p, o.kind, o.throughput_tolerance) ||
               (o.kind == LoadKind::kConcurrency && prev && Plateau(*prev, *p));
    if (sat) {
      r.stop_reason = fmt::format("saturation at {:.4g} {}", load, LoadUnit(o.kind));
      break;
    }
    if (load >= o.max_load) {
      r.stop_reason = fmt::format("reached the maximum load {:.4g} without saturating", o.max_load);
      break;
    }
    prev = *p;
    double next = RoundLoad(std::min(load * o.growth, o.max_load), o.kind);
    load = std::max(next, o.kind == LoadKind::kConcurrency ? load + 1 : next);
  }
  if (r.stop_reason.empty() && !failed) r.stop_reason = "point budget spent while probing";

  // 1b. Nothing passed: probe downward.
  auto sorted = [&] {
    std::vector<SweepPoint> s = r.points;
    std::sort(s.begin(), s.end(), [](const SweepPoint& a, const SweepPoint& b) { return a.load < b.load; });
    return s;
  };
  while (budget_left()) {
    std::vector<SweepPoint> s = sorted();
    if (FindBracket(s, o.kind, o.throughput_tolerance).lo) break;
    double lowest = s.front().load;
    double next = RoundLoad(lowest / o.growth, o.kind);
    if (next >= lowest || next < o.min_load) {
      r.notes.push_back(fmt::format("no load down to {:.4g} {} met the SLO", lowest, LoadUnit(o.kind)));
      break;
    }
    run_one(next);
  }

  // 2. Bisect on the attainment margin.
  while (budget_left()) {
    std::vector<SweepPoint> s = sorted();
    Bracket b = FindBracket(s, o.kind, o.throughput_tolerance);
    if (!b.lo || !b.hi) break;
    double lo = b.lo->load, hi = b.hi->load;
    bool done = o.kind == LoadKind::kConcurrency ? hi - lo <= 1 : (hi - lo) / lo <= o.tolerance;
    if (done) {
      r.stop_reason += fmt::format("; max goodput bracketed within {:.4g}..{:.4g} {}", lo, hi, LoadUnit(o.kind));
      break;
    }
    double m_lo = std::max(b.lo->Margin(), 0.0);
    double m_hi = std::min(b.hi->Margin(), -1e-3);
    double mid = lo + (hi - lo) * m_lo / (m_lo - m_hi);
    mid = std::clamp(mid, lo + 0.25 * (hi - lo), hi - 0.25 * (hi - lo));
    if (o.kind == LoadKind::kConcurrency) {
      mid = std::clamp(std::round(mid), lo + 1, hi - 1);
    } else {
      double rounded = RoundLoad(mid, o.kind);
      if (rounded > lo && rounded < hi) mid = rounded;
    }
    run_one(mid);
  }
  if (!budget_left() && !failed && index >= o.max_points) r.notes.push_back(fmt::format("point budget ({}) spent", o.max_points));
  AnalyzeSweep(r, o.throughput_tolerance);
  return r;
}

}  // namespace infereng::sweep
