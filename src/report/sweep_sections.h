// The sections of report.html for a load sweep: latency vs throughput with the knee and
// the max-goodput point marked, throughput/goodput and SLO attainment vs offered load, the
// twin's prediction beside the measurement when both exist, and the per-point table.
#pragma once

#include <string>

#include "report/html_page.h"
#include "sweep/sweep_io.h"

namespace infereng::report {

// Returns the number of SVG charts added.
int AddSweepSections(HtmlPage& page, const sweep::SweepFile& sweep);

}  // namespace infereng::report
