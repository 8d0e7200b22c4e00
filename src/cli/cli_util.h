// Helpers shared by command handlers: CLI11 parsing with our exit codes and error
// printing, so every command reports usage errors the same way.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "cli/command.h"
#include "core/status.h"

namespace infereng::cli {

// Parses argv with `app`. Returns -1 when the command should go on, otherwise the exit
// code to return now (0 after --help, 2 after a usage error, message printed to io).
int ParseArgs(CLI::App& app, int argc, const char* const* argv, CommandIo& io);

// Prints "infereng <cmd>: error: <status>" to io.err and returns ExitCodeFor(status).
int ReportError(CommandIo& io, std::string_view command, const Status& status);

}  // namespace infereng::cli
