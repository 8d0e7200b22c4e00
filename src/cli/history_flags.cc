#include "cli/history_flags.h"

namespace infereng::cli {

void AddHistoryFlags(CLI::App& app, job::HistoryLocation* loc) {
  app.add_option("--history", loc->path,
                 "Run history database (default: $INFERENG_HISTORY, else $XDG_DATA_HOME or "
                 "~/.local/share/infereng/history.db)");
  app.add_flag("--no-history", loc->disabled, "Do not register this run in the history");
}

void RegisterInHistory(const job::HistoryLocation& loc, const Result<store::RunEntry>& entry,
                       std::string_view command, CommandIo& io, bool announce) {
  Result<std::string> path = job::ResolveHistoryPath(loc);
  if (path.ok() && path->empty()) return;  // --no-history
  const std::string prefix = "infereng " + std::string(command) + ": warning: not registered in the history: ";
  if (!path.ok()) {
    io.err << prefix << path.status().message() << "\n";
    return;
  }
  if (!entry.ok()) {
    io.err << prefix << entry.status().message() << "\n";
    return;
  }
  Result<job::Registered> r = job::RegisterEntry(*path, *entry);
  if (!r.ok()) {
    io.err << prefix << r.status().message() << "\n";
    return;
  }
  if (announce) io.out << "history: run #" << r->id << (r->existing ? " (already registered)" : "") << "\n";
}

}  // namespace infereng::cli
