// The run report's engine and diagnosis sections:
//  - "Engine signals": the client's TTFT over time with the engine's own signals
//    (engine_metrics.jsonl: waiting/running, KV-cache usage, queue time) drawn under it on the
//    same time axis (seconds since the run's t0, one x range for every chart), so a TTFT rise
//    lines up with the queue or KV pressure that caused it;
//  - "Diagnosis": DIR/diagnose.json (written by the run job, job/diagnose.h): validity of
//    the measurement, then the ranked hypotheses with their evidence and experiments.
// Both read their files leniently: a missing file leaves the section out, a bad line is a
// notice in the section, never a failed report.
#pragma once

#include <string>

#include "report/html_page.h"
#include "report/run_data.h"

namespace infereng::report {

// Returns the number of charts added (0: no engine series).
int AddEngineSignalsSection(HtmlPage& page, const RunData& run, const std::string& id_prefix);
void AddDiagnosisSection(HtmlPage& page, const std::string& dir, const std::string& id_prefix);
// DIR/diagnose.json as Markdown for report.md ("" when absent).
std::string DiagnosisMarkdownSection(const std::string& dir);

}  // namespace infereng::report
