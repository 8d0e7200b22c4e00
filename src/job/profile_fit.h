// Profile fit: measured points (`infereng profile`) -> the twin's step-time table
// (twin/measured_cost.h). Pure functions, no I/O, so the fit is unit-tested by hand.
//
// The points and what each measures (seconds are medians over repeats):
//   front_end      TTFT of a tiny prompt          = front_end + tokens(n) + context(0)
//   prefill        TTFT of an n-token prompt      = front_end + tokens(n) + context(0)
//   decode_context batch-1 decode step, c held    = tokens(1) + context(c)
//   decode_batch   decode step of B streams       = tokens(B) + context(c)
//   occupancy      a step of n tokens, o cells held by every slot = occupancy(n, o): the
//                  table.occupancy grid, built from these points alone (FitOccupancyGrid),
//                  kept only when some column grows by kOccupancyMinGrowth or more along
//                  the span and a cell other slots hold costs the decode step at least
//                  kOccupancyMinCellShare of an own-context cell (a unified cache, llama.cpp
//                  b4748); otherwise the cache is per slot, and the curves price the steps
//                  (they hold the decode batches and the own context)
// The fit peels them in that order of dependence: context(c) from the batch-1 decode
// steps (the smallest-context one anchors c = 0 by extending its first segment's slope),
// tokens(B) from the batch decode steps minus their context term, the front end from the
// tiny prompt minus tokens(n) of its few tokens, then tokens(n) of each prefill minus the
// front end. Noise could make context(c) fall as c grows; it is kept non-decreasing.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "twin/profile_file.h"

namespace infereng::job {

// The least growth (relative, first span to last) of an occupancy column for the grid to
// be kept: session 18's llama.cpp b11669 (per-slot caches) measured -3% to +0% across
// 350-12,800 cells, b4748's unified cache +245% across 190-2,300.
inline constexpr double kOccupancyMinGrowth = 0.10;
// ... and the least cost of a cell another slot holds, as a share of a cell of the decoding
// sequence's own context (the context curve's mean slope): a unified cache's attention spans
// both alike (share ~1); b11669's per-slot caches on CPU measured 0.06.
inline constexpr double kOccupancyMinCellShare = 0.25;

// FailedPrecondition when the points cannot make a table (no decode step was measured).
// Notes about what the fit had to assume go to `notes`.
Result<twin::MeasuredTable> FitProfileTable(const std::vector<twin::ProfilePoint>& points,
                                            std::vector<std::string>* notes);

// Fills the table, its fit quality and the notes of `p` from p->points.
Status FitProfile(twin::ProfileFile* p);

}  // namespace infereng::job
