// The infereng binary: everything lives in the library; main only wires the streams.
#include <unistd.h>

#include <iostream>

#include "cli/command.h"

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  infereng::cli::CommandIo io{std::cout, std::cerr, static_cast<bool>(isatty(STDOUT_FILENO)), &std::cin};
  int rc = infereng::cli::RunMain(argc, argv, io);
  std::cout.flush();
  return rc;
}
