// TrafficCard: the workload card's traffic section written from a trace's characterization,
// so `card check` no longer lists the traffic as assumed or missing. Every field carries
// a note "measured: trace sha256:<12 hex> <period>" (the card schema's `note`), and the
// file opens with a comment naming the trace, its full hash and its period.
//
//   arrival        the fitted process (poisson, or gamma with the gaps' CV) at the mean rate
//   peak_rate      the busiest complete minute's rate (the 1 s peak when under a minute)
//   input/output   lognormal {p50, p99} when that meets the trace's p10/p50/p90/p99 within 5%,
//                  else empirical from a sidecar file (one length per line), clamped to the
//                  trace's min and max
//   prefix         from hash_ids: share = requests with a cached prefix, tokens = the median
//                  cached prefix but at most the input p10 (the generator lengthens an input
//                  shorter than its prefix, which would move the input quantiles), distinct =
//                  distinct cached prefixes, tenants = distinct tenants
// Concurrency is not written: with an arrival process the card's `concurrency` is a cap on
// requests in flight, and Little's law gives the mean, not a cap.
//
// With sessions (options.sessions; the trace has session ids or hash_ids the conversations
// are inferred from) the card describes conversations instead of independent requests, as
// workload/sessions.h generates them:
//   arrival        the sessions' starts: the fitted process at the start rate
//   input_tokens   the sessions' first turns
//   output_tokens  every request's (each turn draws its answer length)
//   prefix         over the first turns: share with a cached prefix, tokens = their median
//                  cached prefix but at most their input p10, distinct = their distinct
//                  cached prefixes (later turns' reuse comes from re-sending the conversation)
//   sessions       turns per session, think_time = the time between a session's arrivals
//                  (an upper bound: it holds the earlier turn's own time in the system, which
//                  the card counts apart), new_message_tokens = growth minus the previous
//                  answer (at least 1), each lognormal when within 5% else empirical
// peak_rate stays the busiest minute's request rate. Parallel calls of an agent step (equal
// times in a trace with session ids) are not told apart: each call is a turn.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/status.h"
#include "trace/characterization.h"

namespace infereng::trace {

struct CardOut {
  std::string yaml;
  // Sidecar files (name relative to the card's folder, content) for empirical lengths.
  std::vector<std::pair<std::string, std::string>> files;
};

struct TrafficCardOptions {
  bool sessions = false;  // write the trace's sessions (an error when it has none)
};

// `stem` names the sidecar files ("<stem>.input_tokens.txt").
Result<CardOut> TrafficCard(const Characterization& c, const std::string& stem, const TrafficCardOptions& options = {});

}  // namespace infereng::trace
