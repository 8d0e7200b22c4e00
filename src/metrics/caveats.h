// Caveats: what a Summary cannot say and why. Every printer (terminal table, HTML and
// Markdown report) asks here instead of printing a number that means nothing:
//  - rates need a window to divide by: none when no request was in the window or the
//    window (and the completion span that replaces it) has no length;
//  - a burst (every in-window request scheduled at one instant) has no offered rate;
//  - an empty distribution has no percentile: "n/a" and why it is empty;
//  - a percentile needs enough samples to exist between order statistics: P99 needs
//    100, P99.9 1,000 (MinSamplesFor); fewer gives "P99 from 37 samples".
#pragma once

#include <cstdint>
#include <string>

#include "metrics/summary.h"

namespace infereng::metrics {

// "" when the rates (tok/s, req/s, goodput) can be quoted; else why not.
std::string RatesUnavailable(const Summary& s);
// "" when the offered and achieved rates can be quoted; else why not.
std::string OfferedUnavailable(const Summary& s);
// Why the distribution with summary key `key` ("tpot_ms") is empty, for "n/a (WHY)".
std::string EmptyDistributionReason(const Summary& s, const std::string& key);

// Fewest samples for which the `percentile` is not just the largest value: ceil(100 / (100 - p)).
int64_t MinSamplesFor(double percentile);
// "" when `samples` suffice for `percentile`; else "P99 from 37 samples".
std::string FewSamplesNote(int64_t samples, double percentile);

// "214 tok/s", or "n/a (no requests in the measurement window)" — one cell of a rate.
std::string RateOrNa(const Summary& s, double value, const char* unit, bool offered = false);

}  // namespace infereng::metrics
