// The sections of report.html that describe one run (also used for the detail of one
// sweep point): headline figures, SLOs, latency CDFs, time series, waterfall, errors,
// the full summary table, metric definitions and the manifest.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/html_page.h"
#include "report/run_data.h"

namespace infereng::report {

struct RunSectionOptions {
  std::string id_prefix = "run";
  std::string heading_prefix{};      // e.g. "Point 8 req/s — "
  const RunData* predicted = nullptr;
  std::size_t waterfall_rows = 40;
  bool definitions = true;           // metric boundaries and aliases
  bool manifest = true;
};

// Returns the number of SVG charts added.
int AddRunSections(HtmlPage& page, const RunData& run, const RunSectionOptions& options);

// The "Definitions" section: metric boundaries and the alias table.
void AddDefinitionsSection(HtmlPage& page);

// Manifest as (dotted key, value) rows; values of secret-looking keys are redacted.
std::vector<std::pair<std::string, std::string>> FlattenManifest(const nlohmann::json& manifest);

// The card's name from the manifest ("" when unknown).
std::string CardNameOf(const nlohmann::json& manifest);

// "12.3", "-" for an empty distribution.
std::string Ms(const stats::SampleStats& s, double v);

}  // namespace infereng::report
