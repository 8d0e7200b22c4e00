// The "Quality" section of a run's report: the eval-set checks paired with the load —
// the pass rate with its 95% Wilson interval against the card's threshold, the pass rate
// over the run (per time bucket, with the threshold line), by check kind, and a table of
// the first failing cases (prompt / expected / got). The texts are a model's output and an
// eval set's prompts, i.e. user data: they are already one-line bounded excerpts
// (metrics::QualityExcerpt) and HtmlPage escapes them, so `<script>` renders as text.
#pragma once

#include <string>

#include "report/html_page.h"
#include "report/run_data.h"

namespace infereng::report {

// Adds the section when the run had an eval set (run.quality); returns the charts added.
int AddQualitySection(HtmlPage& page, const RunData& run, const std::string& id_prefix,
                      const std::string& heading_prefix);

}  // namespace infereng::report
