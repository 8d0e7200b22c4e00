// The HTML report of `infereng characterize`: one section per trace (period, arrivals with
// the rate over time, burstiness and the fitted process, length distributions with their
// fits, prefix reuse with the LRU hit-rate curve, sessions), self-contained like every
// infereng report (html_page.h).
#pragma once

#include <string>
#include <vector>

#include "trace/characterization.h"

namespace infereng::report {

std::string TraceReportHtml(const std::vector<trace::Characterization>& traces);

}  // namespace infereng::report
