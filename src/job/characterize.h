// The characterize job (`infereng characterize TRACE...`): each trace read and
// characterised (trace/), then, as asked, DIR/characterize.json + DIR/report.html and a
// card traffic section written from the fit. Printing is the CLI's.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "card/card.h"
#include "core/status.h"
#include "trace/characterization.h"
#include "trace/reader.h"

namespace infereng::job {

struct CharacterizeJobOptions {
  std::vector<std::string> traces;
  trace::ReaderOptions reader;
  trace::CharacterizeOptions stats;
  std::optional<card::WorkloadCard> card;  // Little's law at its latency objectives
  std::string out_dir;                     // "" = write no files
  std::string card_out;                    // "" = none; needs exactly one trace
  bool card_sessions = false;              // card_out describes the trace's sessions (trace/card_out.h)
};

struct CharacterizeJobResult {
  std::vector<trace::Characterization> traces;
  std::vector<std::string> written;  // files written, in order
  std::string littles_note;          // why Little's law is missing with a card ("" = none)
};

// The time in system Little's law uses, from a card's objectives: its E2E objective at the
// lowest percentile; else TTFT + TPOT x (mean output - 1); nullopt (with `why`) otherwise.
std::optional<double> LatencyFromCard(const card::WorkloadCard& card, double mean_output_tokens, std::string* basis);

Result<CharacterizeJobResult> RunCharacterize(const CharacterizeJobOptions& options);

}  // namespace infereng::job
