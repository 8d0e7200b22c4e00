// Helpers shared by command handlers: CLI11 parsing with our exit codes and error
// printing, so every command reports usage errors the same way; the one way every command
// loads a workload card; checks of numeric flags and of input files with plain messages.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "card/card.h"
#include "cli/command.h"
#include "core/status.h"

namespace infereng::cli {

// Parses argv with `app`. Returns -1 when the command should go on, otherwise the exit
// code to return now (0 after --help, 2 after a usage error, message printed to io).
// --help shows every option's default: the value its variable holds before parsing.
int ParseArgs(CLI::App& app, int argc, const char* const* argv, CommandIo& io);

// Prints "infereng <cmd>: error: <status>" to io.err and returns ExitCodeFor(status).
int ReportError(CommandIo& io, std::string_view command, const Status& status);

// Reads a workload card ("-": from io.in) and runs the one validation every command shares:
// the parser's (card::LoadCardFile) and the catalog names and engine knobs
// (twin::CheckCard). `card check` and every command that takes --card accept and reject
// the same cards, with "FILE:LINE: field: what" errors.
Result<card::WorkloadCard> LoadCard(const std::string& path, CommandIo& io);

// An input file a flag names must be a readable regular file: NotFound "--ca-file: PATH:
// no such file", InvalidArgument "--ca-file: PATH is a directory, not a file". Ok for "".
Status CheckInputFile(std::string_view flag, const std::string& path);

// CLI11 checks whose messages print numbers as written ("--speedup: must be > 0, got 0"),
// not CLI11's Range text with 300-digit bounds.
CLI::Validator AtLeast(double lo);            // value >= lo
CLI::Validator Positive();                    // value > 0
CLI::Validator InRange(double lo, double hi);  // lo <= value <= hi

}  // namespace infereng::cli
