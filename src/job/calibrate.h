// Calibrate: fit the roofline's parameters (eff_flops, eff_bandwidth, step overhead), the
// engine's host cost per sequence in a step (engine.seq_overhead: it grows a decode step with
// its batch beyond the KV reads) and the per-request front-end cost to measured step times, by weighted least squares on
// relative error, with standard errors from the residuals (sigma^2 (J^T W J)^-1 at the
// optimum). TTFT points and decode-step points are weighed by the inverse square of their
// own kind's residual RMS (a TTFT carries host noise of the whole request path; a decode
// step is a median of gaps), found by refitting until those RMSes settle.
//
// Input: the points of one or more profiles (`infereng profile`; twin/profile_file.h), each
// a step shape the roofline can price (a batch-1 prefill, a decode step of B sequences
// holding c tokens) and its measured time; TTFT points also carry the front end.
// The card gives the model and accelerator the roofline prices them on.
//
// Identification is said, never invented: a parameter whose value moves no prediction by
// more than 5% over a 2x change (e.g. eff_flops without a compute-bound prefill), or whose
// standard error is above a quarter of its value, is reported as not identified, held at
// the card's value and left out of the `--set` lines.
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "fit/deployment.h"
#include "twin/profile_file.h"

namespace infereng::job {

// The engine's host costs the card's twin charges beside the roofline (engine.step_overhead,
// engine.seq_overhead: twin/engine_config.h). The fixed per-step one is not fitted (it and
// cost.step_overhead add alike, so cost.step_overhead takes the rest); the per-sequence one
// is the prior of engine.seq_overhead.
struct EngineHost {
  double step_s = 0;
  double seq_s = 0;
};

struct CalibrationResult {
  // cost.eff_flops, cost.eff_bandwidth, cost.step_overhead, front_end_s, engine.seq_overhead
  std::vector<twin::FittedParam> params;
  double rms_rel_error_before = 0;        // the card's parameters on the points
  double rms_rel_error_after = 0;
  int points = 0;
};

// `d`: the card's deployment (its efficiencies are the starting point and the prior).
// InvalidArgument when there are no usable points.
Result<CalibrationResult> CalibrateRoofline(const fit::Deployment& d, const std::vector<twin::ProfilePoint>& points,
                                            const EngineHost& host = {});

}  // namespace infereng::job
