#include "cli/cli_util.h"

#include "cli/exit_codes.h"

namespace infereng::cli {

int ParseArgs(CLI::App& app, int argc, const char* const* argv, CommandIo& io) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    io.out << app.help();
    return kExitOk;
  } catch (const CLI::CallForAllHelp&) {
    io.out << app.help("", CLI::AppFormatMode::All);
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    io.err << app.get_name() << ": error: " << e.what() << "\n"
           << "Run '" << app.get_name() << " --help' for usage.\n";
    return kExitUsage;
  }
  return -1;
}

int ReportError(CommandIo& io, std::string_view command, const Status& status) {
  io.err << "infereng " << command << ": error: " << status.ToString() << "\n";
  return ExitCodeFor(status);
}

}  // namespace infereng::cli
