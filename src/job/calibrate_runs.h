// Measured runs -> calibration points: per-request facts of a run directory's
// requests.jsonl as the step shapes `calibrate` (job/calibrate.h) and the profile fit
// (job/profile_fit.h) read.
//
// Each successful request with two or more output tokens gives a decode point: its mean
// decode step (last chunk - first chunk) / (tokens - 1), at the batch it decoded in (the
// requests whose decode span holds this one's midpoint, itself included) and the context
// those requests held (prompt + half their output each). A request sent while no other
// was in flight gives a TTFT point (prefill of its prompt tokens, plus the front end); a
// request that queued behind others does not, since its TTFT holds their steps too.
// This reads the run as steady per-request facts, not by re-simulating its schedule; a
// run at light load identifies the front end and prefill best, a loaded one the decode
// batch curve.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "metrics/record.h"
#include "twin/profile_file.h"

namespace infereng::job {

std::vector<twin::ProfilePoint> PointsFromRecords(const std::vector<metrics::RequestRecord>& records);

// Reads DIR/requests.jsonl. NotFound naming the path when there is none.
Result<std::vector<twin::ProfilePoint>> PointsFromRunDir(const std::string& dir);

}  // namespace infereng::job
