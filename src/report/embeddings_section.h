// The "Embeddings" section of a run's report (HTML) and its Markdown lines: the summary's
// embeddings block (metrics/embeddings_summary.h) — items and input tokens per second of
// the window, the requests, items and tokens counted, and the batch-size and tokens-per-item
// distributions. An embeddings run has no token stream, so these are its throughput figures.
#pragma once

#include <string>

#include "metrics/summary.h"
#include "report/html_page.h"
#include "report/run_data.h"

namespace infereng::report {

// Adds the section when the summary has an embeddings block; otherwise nothing.
void AddEmbeddingsSection(HtmlPage& page, const RunData& run, const std::string& id_prefix,
                          const std::string& heading_prefix);

// Markdown table rows ("| key | value |") for the run summary; "" without embeddings.
std::string EmbeddingsMarkdownRows(const metrics::Summary& s);

}  // namespace infereng::report
