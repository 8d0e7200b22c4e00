// probe.html: the probe suite's report, one self-contained page (report/html_page.h, no
// scripts) beside probe.json. A readiness checklist, then per probe that ran: its verdict,
// finding and why, the evidence numbers (the same values as probe.json, printed to 6
// significant digits), and its timelines — each request's latency and TTFT over time, and
// the engine's running / waiting counts and KV-cache usage (ProbeTrace) — with the probe's
// events (overload bursts, the cancellation instant, start, /health 200, first token...)
// drawn as vertical lines on every chart and listed in a table.
#pragma once

#include <string>

#include "core/status.h"
#include "job/probe.h"

namespace infereng::job {

std::string ProbeReportHtml(const std::string& target, const ProbeSuiteOutcome& outcome, bool complete);
Status WriteProbeReport(const std::string& path, const std::string& target, const ProbeSuiteOutcome& outcome,
                        bool complete);

// How the report prints an evidence value (tests compare it with probe.json's).
std::string EvidenceText(double value);

// At most this many events become lines on a chart (the table lists all of them).
inline constexpr std::size_t kMaxEventLines = 10;

}  // namespace infereng::job
