// SLO semantics: the one place that says which per-request thresholds goodput and
// attainment count, and when a card's objectives are ambiguous.
//
// A card states two different things under `slo:` (docs/metrics.md, "SLO evaluation"):
//  - percentile objectives (`ttft: {p50: 200ms, p99: 500ms}`): judged on the run's pooled
//    percentile, each separately — never per request;
//  - per-request thresholds (`goodput: {ttft: 500ms, tpot: 50ms}`, as vLLM's
//    `--goodput ttft:X tpot:Y` and DistServe define goodput): a request is good when it
//    meets every one; goodput counts good requests per second and `attainment` is the share
//    of requests that must be good.
// Without `slo.goodput`, each metric's threshold defaults to its highest-percentile
// objective (the loosest one a card states), so a p50 objective never becomes a
// per-request bar that 99% of requests must clear.
#pragma once

#include <string>
#include <vector>

#include "card/card.h"

namespace infereng::card {

// The per-request thresholds goodput and attainment use: slo.goodput when the card has it,
// else one per metric from its highest-percentile objective, in objective order.
std::vector<RequestThreshold> GoodputThresholds(const SloSpec& slo);

// "ttft <= 500 ms, tpot <= 50 ms (slo.goodput)" or "... (default: the card's highest-
// percentile objectives: ttft p99, tpot p99)"; "none (no latency objectives)" when empty.
std::string DescribeGoodputThresholds(const std::vector<RequestThreshold>& thresholds);

// Short metric name for people: "ttft_ms" -> "ttft".
std::string MetricShortName(const std::string& metric);

// Where a card mixes the two notions ambiguously, one line each (`card check` prints them):
// an attainment target over defaulted thresholds that come from an objective below the
// attainment percentile (a p50 objective with attainment 0.99 would have meant a P99 bar),
// and slo.goodput thresholds tighter than a percentile objective they would override.
std::vector<std::string> SloAmbiguities(const WorkloadCard& card);

}  // namespace infereng::card
