// The "Sessions" / "Tasks" section of a run's report (HTML) and its Markdown lines: the
// summary's sessions block (metrics/sessions.h) — outcomes, tasks/s and goodput, the task
// latency percentiles, the task SLO, and prefix reuse and median call latency by turn.
#pragma once

#include <string>

#include "metrics/summary.h"
#include "report/html_page.h"
#include "report/run_data.h"

namespace infereng::report {

// Adds the section when the summary has a sessions block; otherwise nothing.
void AddSessionSection(HtmlPage& page, const RunData& run, const std::string& id_prefix,
                       const std::string& heading_prefix);

// Markdown table rows ("| key | value |") for the run summary; "" without sessions.
std::string SessionMarkdownRows(const metrics::Summary& s);

}  // namespace infereng::report
