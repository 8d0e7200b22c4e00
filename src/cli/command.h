// The CLI's command table: one row per subcommand {name, one-line help, handler}.
//
// The same table prints `infereng --help`, dispatches, and suggests "did you mean".
// Handlers live one per file (cli/cmd_<name>.cc), parse their own flags with CLI11 and
// print to the CommandIo streams (never to std::cout directly), so tests can run a
// command in-process and read what it printed. Handlers return an exit code (exit_codes.h).
#pragma once

#include <istream>
#include <ostream>
#include <span>
#include <string_view>

namespace infereng::cli {

struct CommandIo {
  std::ostream& out;
  std::ostream& err;
  bool out_is_tty = false;
  std::istream* in = nullptr;  // standard input, for "-" file arguments (null: none)
};

// argv[0] is "infereng <name>"; argv[1..argc) are the command's own arguments.
using CommandFn = int (*)(int argc, const char* const* argv, CommandIo& io);

struct Command {
  std::string_view name;
  std::string_view help;
  CommandFn run;
};

// Every subcommand, in the order `infereng --help` lists them.
std::span<const Command> Commands();

// Runs `infereng argv...` (argv[0] is the program name). Used by main and by tests.
int RunMain(int argc, const char* const* argv, CommandIo& io);

}  // namespace infereng::cli
