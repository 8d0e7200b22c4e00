// The measured point runner of `infereng sweep` (--simulate's is sweep::MakeTwinPointRunner):
// each point is the bench job (job::RunBench) against --target, or against a fresh embedded
// engine per point (JobEngine, with --speedup S: the point runs at S × the rate against
// S-times-tighter SLOs and its figures are converted back to engine time). While a point
// runs, its progress feeds the saturation detector (sweep/saturation.h); a saturated point
// is stopped early and marked. It lives in job/ because it runs a job: sweep/ (the search,
// the files, the twin's points) stays below job/.
//
// Thread-safety: a runner is called from one thread at a time (the search is sequential).
#pragma once

#include "core/status.h"
#include "sweep/runner.h"
#include "sweep/search.h"

namespace infereng::job {

Result<sweep::PointRunner> MakeBenchPointRunner(const sweep::SweepRunOptions& options);

}  // namespace infereng::job
