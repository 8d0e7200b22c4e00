#include "job/calibrate.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "core/linear_solve.h"
#include "fit/step_cost.h"

namespace infereng::job {

namespace {

constexpr int kParams = 5;  // eff_flops, eff_bandwidth, step_overhead_s, front_end_s, engine seq_overhead_s
using Theta = std::array<double, kParams>;
constexpr std::array<const char*, kParams> kKeys = {"cost.eff_flops", "cost.eff_bandwidth", "cost.step_overhead",
                                                     "front_end_s", "engine.seq_overhead"};

// What a point is priced on: the card's roofline, plus the engine's fixed host cost per
// step (engine.step_overhead, not fitted: cost.step_overhead takes the rest).
struct Model {
  fit::Deployment d;
  double engine_step_s = 0;
};

bool IsTtft(const twin::ProfilePoint& p) { return p.kind == "front_end" || p.kind == "prefill"; }

fit::StepShape ShapeOf(const twin::ProfilePoint& p) {
  fit::StepShape s;
  if (IsTtft(p)) {
    s.prefill_seqs = 1;
    s.prefill_tokens = std::max<int64_t>(1, p.new_tokens);
  } else {
    s.decode_seqs = std::max(1, p.batch);
    s.decode_context = p.context_tokens;
  }
  return s;
}

// Sequences in the point's step (engine.seq_overhead is charged per sequence).
double SeqsOf(const twin::ProfilePoint& p) { return IsTtft(p) ? 1.0 : static_cast<double>(std::max(1, p.batch)); }

std::vector<double> Predict(const Model& m, const Theta& th, const std::vector<twin::ProfilePoint>& pts) {
  fit::Deployment d = m.d;
  d.eff.flops = th[0];
  d.eff.bandwidth = th[1];
  d.eff.step_overhead_s = th[2];
  const fit::RooflineStepCost cost(d);
  std::vector<double> out;
  out.reserve(pts.size());
  for (const twin::ProfilePoint& p : pts) {
    out.push_back(cost.Seconds(ShapeOf(p)) + m.engine_step_s + th[4] * SeqsOf(p) + (IsTtft(p) ? th[3] : 0.0));
  }
  return out;
}

std::vector<double> Residuals(const Model& d, const Theta& th, const std::vector<twin::ProfilePoint>& pts) {
  std::vector<double> r = Predict(d, th, pts);
  for (std::size_t i = 0; i < r.size(); ++i) r[i] = (r[i] - pts[i].seconds) / pts[i].seconds;
  return r;
}

double Rms(const std::vector<double>& r) {
  double s = 0;
  for (double x : r) s += x * x;
  return r.empty() ? 0 : std::sqrt(s / static_cast<double>(r.size()));
}

Theta Clamp(Theta t) {
  t[0] = std::clamp(t[0], 0.01, 1.5);
  t[1] = std::clamp(t[1], 0.01, 1.5);
  t[2] = std::clamp(t[2], 0.0, 1.0);
  t[3] = std::clamp(t[3], 0.0, 10.0);
  t[4] = std::clamp(t[4], 0.0, 0.01);
  return t;
}

double Step(const Theta& t, int j) { return j < 2 ? 1e-4 * t[j] : j == 4 ? 1e-7 : 1e-6; }

struct FitState {
  Theta th{};
  std::vector<double> se = std::vector<double>(kParams, 0.0);
};

// Levenberg-Marquardt on the free parameters (the others at `prior`) minimising the
// weighted sum of squared relative residuals (point i weighs sqrt_w[i]^2), then standard
// errors sigma^2 (J^T W J)^-1 with sigma^2 = weighted SSR / (n - p).
FitState FitFree(const Model& d, const std::vector<twin::ProfilePoint>& pts, const Theta& prior,
                 const std::array<bool, kParams>& free, const std::vector<double>& sqrt_w) {
  const auto weighted = [&](const Theta& t) {
    std::vector<double> r = Residuals(d, t, pts);
    for (std::size_t i = 0; i < r.size(); ++i) r[i] *= sqrt_w[i];
    return r;
  };
  Theta th = prior;
  std::vector<int> idx;
  for (int j = 0; j < kParams; ++j) {
    if (free[j]) idx.push_back(j);
  }
  const std::size_t m = idx.size();
  std::vector<double> r = weighted(th);
  double lambda = 1e-3;
  std::vector<std::vector<double>> jac;  // jac[i][k] = d r_i / d theta_idx[k]
  auto jacobian = [&](const Theta& t) {
    jac.assign(pts.size(), std::vector<double>(m, 0));
    for (std::size_t k = 0; k < m; ++k) {
      Theta u = t;
      const double h = Step(t, idx[k]);
      u[idx[k]] += h;
      const std::vector<double> ru = weighted(u), r0 = weighted(t);
      for (std::size_t i = 0; i < pts.size(); ++i) jac[i][k] = (ru[i] - r0[i]) / h;
    }
  };
  auto normal = [&](double lam, std::vector<std::vector<double>>* a, std::vector<double>* g) {
    a->assign(m, std::vector<double>(m, 0));
    g->assign(m, 0);
    for (std::size_t i = 0; i < pts.size(); ++i) {
      for (std::size_t k = 0; k < m; ++k) {
        (*g)[k] -= jac[i][k] * r[i];
        for (std::size_t l = 0; l < m; ++l) (*a)[k][l] += jac[i][k] * jac[i][l];
      }
    }
    for (std::size_t k = 0; k < m; ++k) (*a)[k][k] *= 1 + lam;
  };
  for (int iter = 0; iter < 100 && m > 0; ++iter) {
    jacobian(th);
    std::vector<std::vector<double>> a;
    std::vector<double> g, dx;
    normal(lambda, &a, &g);
    if (!SolveLinear(a, g, &dx)) break;
    Theta next = th;
    for (std::size_t k = 0; k < m; ++k) next[idx[k]] += dx[k];
    next = Clamp(next);
    const std::vector<double> rn = weighted(next);
    if (Rms(rn) < Rms(r)) {
      const double gain = Rms(r) - Rms(rn);
      th = next;
      r = rn;
      lambda = std::max(1e-9, lambda / 3);
      if (gain < 1e-10) break;
    } else {
      lambda *= 4;
      if (lambda > 1e8) break;
    }
  }

  std::vector<double> se(kParams, 0);
  if (m > 0) {
    jacobian(th);
    std::vector<std::vector<double>> a;
    std::vector<double> g;
    normal(0, &a, &g);
    const double dof = std::max<double>(1, static_cast<double>(pts.size()) - static_cast<double>(m));
    double ssr = 0;
    for (double x : r) ssr += x * x;
    for (std::size_t k = 0; k < m; ++k) {
      std::vector<double> e(m, 0), col;
      e[k] = 1;
      if (SolveLinear(a, e, &col)) se[idx[k]] = std::sqrt(std::max(0.0, col[k] * ssr / dof));
      else se[idx[k]] = INFINITY;
    }
  }
  return FitState{th, se};
}

}  // namespace

Result<CalibrationResult> CalibrateRoofline(const fit::Deployment& deployment, const std::vector<twin::ProfilePoint>& all,
                                            const EngineHost& host) {
  std::vector<twin::ProfilePoint> pts;
  for (const twin::ProfilePoint& p : all) {
    // Occupancy points are priced by the profile's own grid (other slots' cells, which a
    // batch's roofline step does not see): they calibrate nothing here.
    if (p.seconds > 0 && p.kind != "occupancy") pts.push_back(p);
  }
  if (pts.empty()) return Status::InvalidArgument("no measured points to calibrate on");
  const Model d{deployment, host.step_s};
  const Theta prior = {deployment.eff.flops, deployment.eff.bandwidth, deployment.eff.step_overhead_s, 0.0, host.seq_s};
  CalibrationResult out;
  out.points = static_cast<int>(pts.size());
  out.rms_rel_error_before = Rms(Residuals(d, prior, pts));

  // Which parameters the data can move: flops and bandwidth by a 2x change moving some
  // prediction > 5%; the front end only with TTFT points; the step overhead always (every
  // point has a step); the per-sequence cost only with decode steps of two batch sizes.
  std::array<bool, kParams> free{};
  for (int j = 0; j < 2; ++j) {
    Theta half = prior;
    half[j] *= 0.5;
    const std::vector<double> a = Predict(d, prior, pts), b = Predict(d, half, pts);
    for (std::size_t i = 0; i < a.size(); ++i) free[j] = free[j] || std::abs(b[i] / a[i] - 1) > 0.05;
  }
  free[2] = true;
  free[3] = std::any_of(pts.begin(), pts.end(), IsTtft);
  {
    std::vector<int32_t> batches;
    for (const twin::ProfilePoint& p : pts) {
      if (!IsTtft(p)) batches.push_back(std::max(1, p.batch));
    }
    free[4] = !batches.empty() && *std::min_element(batches.begin(), batches.end()) !=
                                      *std::max_element(batches.begin(), batches.end());
  }

  // Fit; a parameter the fit cannot pin down (standard error too large: collinear with
  // another) is held at the card's value and the rest refitted, so the identified ones
  // absorb its effect and the predictions stay right.
  const std::array<bool, kParams> identifiable = free;
  std::array<bool, kParams> collinear{};
  std::array<double, kParams> dropped_se{};  // its standard error when it was dropped
  auto fit_dropping = [&](const std::vector<double>& sqrt_w) {
    free = identifiable;
    collinear = {};
    FitState st = FitFree(d, pts, prior, free, sqrt_w);
    for (int round = 0; round < kParams; ++round) {
      bool changed = false;
      for (int j : {4, 2, 3, 1, 0}) {  // the overheads first: they are the usual collinear pair
        const bool loose = !std::isfinite(st.se[j]) || (j < 2 && st.se[j] > 0.25 * st.th[j]) ||
                           (j == 4 && st.se[j] > std::max(0.5 * st.th[j], 5e-6)) ||
                           ((j == 2 || j == 3) && st.se[j] > std::max(0.5 * st.th[j], 2e-4));
        if (free[j] && loose) {
          free[j] = false;
          collinear[j] = true;
          dropped_se[j] = st.se[j];
          changed = true;
          break;  // one at a time: freeing the worst may pin the others
        }
      }
      if (!changed) break;
      st = FitFree(d, pts, prior, free, sqrt_w);
    }
    return st;
  };
  // Two kinds of point, two noise levels: a TTFT carries the whole request path (a host
  // delay before the server sees the request adds to it), a decode step is a robust median
  // over many events. Equal weights let a few percent of TTFT noise decide the bandwidth,
  // which only the decode steps' slope over context pins. So: fit with equal weights,
  // estimate each kind's residual RMS (floored at 0.2%), refit with weights 1 / RMS^2, and
  // repeat while the RMSes move (feasible generalised least squares with two groups; a
  // group's RMS first includes the misfit of the equal-weight fit, hence the passes).
  FitState fs = fit_dropping(std::vector<double>(pts.size(), 1.0));
  std::array<double, 2> sigma = {1, 1};
  for (int pass = 0; pass < 4; ++pass) {
    const std::vector<double> r = Residuals(d, fs.th, pts);
    std::array<double, 2> ss{}, n{};
    for (std::size_t i = 0; i < pts.size(); ++i) {
      ss[IsTtft(pts[i])] += r[i] * r[i];
      n[IsTtft(pts[i])] += 1;
    }
    if (n[0] == 0 || n[1] == 0) break;  // one kind only: equal weights are the weights
    std::array<double, 2> next{};
    for (int g = 0; g < 2; ++g) next[g] = std::max(0.002, std::sqrt(ss[g] / n[g]));
    if (pass > 0 && std::abs(next[0] / sigma[0] - 1) < 0.1 && std::abs(next[1] / sigma[1] - 1) < 0.1) break;
    sigma = next;
    std::vector<double> sqrt_w(pts.size());
    for (std::size_t i = 0; i < pts.size(); ++i) sqrt_w[i] = 1.0 / sigma[IsTtft(pts[i])];
    fs = fit_dropping(sqrt_w);
  }
  const Theta th = fs.th;
  const std::vector<double> se = fs.se;
  out.rms_rel_error_after = Rms(Residuals(d, th, pts));
  for (int j = 0; j < kParams; ++j) {
    twin::FittedParam f{.key = kKeys[j], .value = free[j] ? th[j] : prior[j], .stderr_ = se[j], .identified = free[j]};
    if (collinear[j]) {
      f.identified = false;
      f.note = "not identified: collinear with another parameter in these data (standard error " +
               std::to_string(dropped_se[j]) + "); held at the card's value";
    } else if (!free[j]) {
      f.note = j == 0 ? "not identified: no measured step is compute-bound (profile longer prompts)"
               : j == 1 ? "not identified: no measured step is memory-bound"
               : j == 4 ? "not identified: no decode steps at two batch sizes"
                        : "not identified: no TTFT was measured";
    } else {
      f.note = "fitted on " + std::to_string(pts.size()) + " points";
    }
    out.params.push_back(f);
  }
  return out;
}

}  // namespace infereng::job
