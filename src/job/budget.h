// Latency budget: each of a card's latency objectives split into the parts that spend it —
// network, pre-processing, server queueing, prefill, decode, post-processing — with the
// headroom left, and the limits that follow from it on this hardware (the longest prompt
// that still meets the TTFT target, the longest output that meets the E2E target, the load
// at which queueing eats what is left).
//
// Where each number comes from: network / preprocess / postprocess are the card's
// `product` figures (a part the card does not give is 0 and listed as missing); queue,
// prefill and decode are the twin's, simulated at the card's load (same card, seed and
// load rule as `simulate`), per request, at the objective's percentile. Percentiles do not
// add: each part is its own percentile, so their sum bounds the objective from above;
// the verdict uses the twin's percentile of the whole metric plus the card's fixed parts.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "card/card.h"
#include "core/status.h"
#include "twin/setup.h"

namespace infereng::job {

struct BudgetPart {
  std::string name;    // "network", "preprocess", "queue", "prefill", "decode", "postprocess"
  double ms = 0;
  std::string source;  // "card product.network", "twin P99 over 1,180 requests", ...
};

struct BudgetLine {
  std::string metric;  // "ttft_ms", "e2e_ms", "tpot_ms", "itl_ms"
  double percentile = 99;
  double target_ms = 0;
  std::vector<BudgetPart> parts;
  double parts_sum_ms = 0;   // upper bound of the percentile of the sum
  double expected_ms = 0;    // the twin's percentile of the metric + the card's fixed parts
  double headroom_ms = 0;    // target - expected (negative: over budget)
  std::string largest;       // the part that spends the most
  bool pass = false;
};

struct BudgetLimits {
  // Longest prompt whose TTFT (fixed parts + queue at the objective's percentile + its own
  // prefill, run alone) stays within the TTFT target; 0 when even one token misses.
  std::optional<int64_t> longest_prompt_tokens;
  // Longest output meeting the E2E target at the card's TTFT and TPOT percentiles.
  std::optional<int64_t> longest_output_tokens;
  double tpot_ms = 0;  // the TPOT percentile it used (the E2E objective's)
  // Open-loop rate at which the twin's TTFT (or E2E) percentile reaches its target.
  std::optional<double> queueing_limit_rps;
  std::vector<std::string> notes;  // why a limit is absent, and what each assumes
};

struct BudgetResult {
  std::string description;   // model on hardware, load
  double load_rps = 0;       // offered (open loop); 0 closed loop
  int64_t requests = 0;      // twin requests the percentiles come from
  std::vector<BudgetLine> lines;
  BudgetLimits limits;
  std::vector<std::string> missing;  // card parts not given (counted as 0)
};

struct BudgetOptions {
  double duration_s = 120;   // simulated window (capped at the card's bench.duration)
  bool search_load = true;   // find the queueing limit (a few more twin runs)
};

// FailedPrecondition when the card has no latency objective to split.
Result<BudgetResult> BuildBudget(const card::WorkloadCard& card, const twin::TwinSetup& setup,
                                 const BudgetOptions& options);

nlohmann::json BudgetToJson(const BudgetResult& b);
std::string BudgetText(const BudgetResult& b);

}  // namespace infereng::job
