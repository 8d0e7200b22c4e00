// `infereng version` / `infereng --version`.
#include "cli/cli_util.h"
#include "infereng/version_info.h"

namespace infereng::cli {

int RunVersion(int argc, const char* const* argv, CommandIo& io) {
  CLI::App app("Print the version and git commit", argv[0]);
  if (int rc = ParseArgs(app, argc, argv, io); rc >= 0) return rc;
  io.out << "infereng " << build::kVersion << " (commit " << build::kGitCommit
         << (build::kGitDirty ? ", modified" : "") << ")\n";
  return 0;
}

}  // namespace infereng::cli
