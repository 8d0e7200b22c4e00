// The "Transcription" section of a run's report (HTML) and its Markdown rows: the
// summary's audio block (metrics/audio_summary.h) — clips, seconds of audio, audio
// throughput (x real time) and the real-time factor's distribution. Absent for a run whose
// requests carried no audio.
#pragma once

#include <string>

#include "metrics/summary.h"
#include "report/html_page.h"
#include "report/run_data.h"

namespace infereng::report {

// Adds the section when the summary has an audio block; otherwise nothing.
void AddAudioSection(HtmlPage& page, const RunData& run, const std::string& id_prefix,
                     const std::string& heading_prefix);

// Markdown table rows ("| key | value |") for the run summary; "" without audio.
std::string AudioMarkdownRows(const metrics::Summary& s);

}  // namespace infereng::report
