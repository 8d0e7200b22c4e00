// Acceptance expressions for `compare --accept` (and `history check --accept`): a bound on
// the change from A to B of one compared metric, e.g.
//   ttft_ms.p99<=-10%      B's TTFT P99 at least 10% below A's (relative change)
//   e2e_ms.mean<=+20ms     at most 20 ms slower on average (absolute change, metric units)
//   goodput_rps>=0         goodput did not fall
//   error_rate<=+0.5pp     error rate up by at most half a percentage point
// Grammar: METRIC[.STAT] OP [+|-]NUMBER[UNIT], spaces allowed around tokens. METRIC is a
// compared key (ttft_ms, itl_ms, tpot_ms, e2e_ms, ttft_incl_queue_ms, e2e_incl_queue_ms,
// output_tokens_per_s, requests_per_s, goodput_rps, error_rate, quality_pass_rate); STAT is
// p50, p90, p95, p99 or mean (latencies only; required for them). OP is <=, <, >=, >.
// UNIT: % (relative change), ms or s (latencies), pp (percentage points, rates in [0,1]);
// none: the metric's own unit. Errors name the expression and the 1-based column.
//
// An expression is judged on the point estimate of the change; the result also says whether
// the 95% interval lies entirely on the passing side (docs/compare.md, "Acceptance").
#pragma once

#include <string>
#include <vector>

#include "core/status.h"

namespace infereng::job {

struct AcceptExpr {
  std::string text;        // as written
  std::string metric;      // "ttft_ms.p99", "goodput_rps"
  enum class Op { kLe, kLt, kGe, kGt } op = Op::kLe;
  double value = 0;        // relative: a fraction (-10% -> -0.10); absolute: metric units (ms, fraction)
  bool relative = false;
};

// Parses one expression; InvalidArgument "--accept 'EXPR': column N: what was expected".
Result<AcceptExpr> ParseAcceptExpr(const std::string& text);
// Several; the first error stops.
Result<std::vector<AcceptExpr>> ParseAcceptExprs(const std::vector<std::string>& texts);

// True when `x OP value` holds.
bool Holds(AcceptExpr::Op op, double x, double value);
const char* OpText(AcceptExpr::Op op);  // "<=", ...

}  // namespace infereng::job
