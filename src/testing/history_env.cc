// Compiled into every test binary (CMakeLists.txt): before any test runs, the run history
// points into the build tree, so a test that runs `run`, `bench`, `sweep` or `simulate`
// (in-process or as a child process, which inherits the environment) never writes into the
// user's real ~/.local/share/infereng/history.db. Overrides a value the shell set: a
// developer's own INFERENG_HISTORY must not collect test runs either.
#include <cstdlib>

namespace {

struct HistoryInBuildTree {
  HistoryInBuildTree() { ::setenv("INFERENG_HISTORY", INFERENG_TEST_HISTORY, 1); }
};
const HistoryInBuildTree kHistoryInBuildTree;

}  // namespace
