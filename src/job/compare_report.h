// What `compare` shows: the Comparison as JSON (for machines: `--json`, history, canary),
// a terminal table, Markdown and a self-contained HTML page (report/html_page.h; every
// string from a run — paths, manifest values — escaped). One row list feeds all three
// text forms, so they say the same thing.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "job/compare.h"

namespace infereng::job {

// {"schema": "infereng.compare/1", "a", "b", "kind": "runs"|"sweeps", "experiment":
//  {"kind", "variables": [...], "changes": [{"variable", "kind", "key", "a", "b"}], "notes"},
//  "metrics": [{"key", "label", "unit", "better": "lower"|"higher", "a", "b", "delta",
//   "ci_low", "ci_high", "rel", "rel_low", "rel_high", "n_a", "n_b", "verdict",
//   "requests_to_detect", "method"}], "sweep": [{"what", "a", "b", "delta", "unit"}],
//  "findings": [{"kind", "warning", "text"}], "acceptance": [{"expression", "source", "pass",
//  "confident", "detail"}], "accepted", "bootstrap": {"resamples", "confidence", "seed",
//  "max_values", "min_units", "block"}, "requests_to_detect_method"}
nlohmann::json ComparisonToJson(const Comparison& c);

struct CompareTextOptions {
  bool all_metrics = false;  // also the incl.-queue distributions and P50..mean of every metric
};

std::string FormatComparisonText(const Comparison& c, const CompareTextOptions& options = {});
std::string ComparisonMarkdown(const Comparison& c);
std::string ComparisonHtml(const Comparison& c);

}  // namespace infereng::job
