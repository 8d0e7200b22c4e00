// A plan (job/plan.h) as JSON for machines (schema "infereng.plan/1", docs/plan.md), Markdown
// and self-contained HTML for people (every card- or run-derived string escaped), and the
// short terminal summary; WritePlanFiles puts plan.json, plan.md and plan.html in a folder.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "core/status.h"
#include "job/plan.h"

namespace infereng::job {

nlohmann::json PlanToJson(const Plan& plan);
std::string PlanToMarkdown(const Plan& plan);
std::string PlanToHtml(const Plan& plan);
// A few lines: baseline, top hypothesis, the top experiments, the acceptance command.
std::string PlanSummaryText(const Plan& plan);

// Creates `dir` if needed and writes plan.json, plan.md and plan.html; IoError naming the file.
Status WritePlanFiles(const Plan& plan, const std::string& dir);

}  // namespace infereng::job
