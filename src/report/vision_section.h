// The "Vision inputs" section of a run's report (HTML) and its Markdown rows: the summary's
// vision block (metrics/vision_summary.h) — requests with images, images, image tokens and
// images per second of the window. Absent for a run whose requests carried no image.
#pragma once

#include <string>

#include "metrics/summary.h"
#include "report/html_page.h"
#include "report/run_data.h"

namespace infereng::report {

// Adds the section when the summary has a vision block; otherwise nothing.
void AddVisionSection(HtmlPage& page, const RunData& run, const std::string& id_prefix,
                      const std::string& heading_prefix);

// Markdown table rows ("| key | value |") for the run summary; "" without images.
std::string VisionMarkdownRows(const metrics::Summary& s);

}  // namespace infereng::report
