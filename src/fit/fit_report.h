// FitReport: one `infereng fit` evaluation (memory plan + roofline) and its two renderings,
// a terminal table and JSON. Kept in the library (not the CLI) so report/sweep code can
// reuse the same numbers and keys. Building strings only: nothing here prints.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "fit/deployment.h"
#include "fit/memory_plan.h"
#include "fit/roofline.h"

namespace infereng::fit {

struct FitRequest {
  Deployment deployment;
  MemoryOptions memory;
  int64_t context = 8192;  // tokens per sequence (prompt + output)
  int batch = 1;           // concurrent sequences wanted
};

struct FitReport {
  FitRequest request;
  MemoryPlan plan;
  RooflineSummary roofline;
  double price_per_hour_usd = 0;          // the whole replica
  double usd_per_million_output_tokens = 0;  // at peak decode throughput (0 if none)
};

// Validates the deployment and options (InvalidArgument naming the field) and evaluates.
Result<FitReport> EvaluateFit(const FitRequest& request);

// JSON keys (stable): weights_bytes, weights_bytes_per_gpu, kv_bytes_per_token,
// kv_bytes_per_token_per_gpu, max_concurrent_sequences, fits, verdict, reason,
// headroom_bytes, kv_pool_bytes, kv_capacity_tokens, decode_step_ms, prefill_ms,
// memory_items[], roofline{...}, deployment{...}.
nlohmann::json FitReportJson(const FitReport& r);

// The human-readable table (plain text, no colour).
std::string FitReportTable(const FitReport& r);

}  // namespace infereng::fit
