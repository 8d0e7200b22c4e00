// --history PATH / --no-history, shared by every command that registers in the run
// history (run, bench, sweep, simulate, merge), and the one registration call they make
// at the end of their job. A registration that fails is a warning: the run's own result
// and exit code stand (its files are on disk; `history import DIR` can add it later).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <string_view>

#include "cli/command.h"
#include "core/status.h"
#include "job/history.h"
#include "store/history_db.h"

namespace infereng::cli {

void AddHistoryFlags(CLI::App& app, job::HistoryLocation* loc);

// Registers `entry` (or prints why not to io.err); `announce` prints "history: run #ID"
// on io.out (off for --json output).
void RegisterInHistory(const job::HistoryLocation& loc, const Result<store::RunEntry>& entry,
                       std::string_view command, CommandIo& io, bool announce);

}  // namespace infereng::cli
