// The run history as jobs see it (storage: store/history_db.h): where the database lives,
// the entry a finished run directory (or a simulation) becomes, registration at the end of a
// job, import of existing run directories, and the baseline lookup `history check` will use.
//
// What goes in an entry comes from the files a run leaves (manifest.json, summary.json,
// sweep.json), so registering at the end of a job and importing the same directory later
// give the same row; a partial (interrupted) run registers too, marked partial.
// Location: --history PATH, else $INFERENG_HISTORY, else $XDG_DATA_HOME/infereng/history.db,
// else ~/.local/share/infereng/history.db; --no-history (or INFERENG_HISTORY=off) skips it.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "card/card.h"
#include "core/status.h"
#include "store/history_db.h"

namespace infereng::job {

struct HistoryLocation {
  std::string path;       // --history PATH ("" = not given)
  bool disabled = false;  // --no-history
};

using EnvLookup = std::function<const char*(const char*)>;

// The database path, or "" when history is off. InvalidArgument when no path can be found
// (no $HOME and nothing else set).
Result<std::string> ResolveHistoryPath(const HistoryLocation& loc, const EnvLookup& env = nullptr);

// The entry of a run directory: a sweep (sweep.json) or a run (manifest.json and
// summary.json; "merge" when the manifest has a merge block, "run" when it ran the embedded
// engine, else "bench"). `kind` overrides the guess when not empty. dir is stored absolute.
Result<store::RunEntry> EntryFromRunDir(const std::string& dir, std::string_view kind = {});

// The entry of one run from its manifest and summary.json (the summary schema, plus the
// job's extras: trials' CIs).
Result<store::RunEntry> EntryFromRun(std::string_view kind, const nlohmann::json& manifest,
                                     const nlohmann::json& summary, const std::string& dir);

// The entry of a `simulate` (no directory: the twin's summary of the card).
Result<store::RunEntry> EntryFromSimulation(const card::WorkloadCard& card, uint64_t seed,
                                            const nlohmann::json& summary);

// Opens the database at `path` and inserts `entry` (a run directory already registered is
// not added twice: its existing id comes back with `existing` set).
struct Registered {
  int64_t id = 0;
  bool existing = false;
};
Result<Registered> RegisterEntry(store::HistoryDb& db, const store::RunEntry& entry);
Result<Registered> RegisterEntry(const std::string& db_path, const store::RunEntry& entry);

// A baseline reference: "ID" / "#ID" or "latest-passing" (the newest complete run matching
// `f` that passed its SLOs). InvalidArgument for anything else.
Result<store::RunEntry> FindBaseline(store::HistoryDb& db, std::string_view ref, const store::ListFilter& f);

// Parses a --since value: "2026-12-01", "2026-12-01T10:00:00Z" or a relative "7d" / "12h"
// (before `now_iso`). Returns the ISO 8601 prefix history compares with.
Result<std::string> ParseSince(std::string_view since, std::string_view now_iso);

}  // namespace infereng::job
