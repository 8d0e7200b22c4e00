// `infereng diagnose RUN_DIR [--json]`: the validity of a run's measurement, then ranked
// bottleneck hypotheses with evidence and one-variable experiments (job/diagnose.h).
// Exit codes: 0 diagnosed, 1 diagnosed but the client shaped the measurement (its numbers
// are not the engine's), 2 not a run directory or a bad file in it.
#include "cli/cli_util.h"
#include "job/diagnose.h"

namespace infereng::cli {

int RunDiagnose(int argc, const char* const* argv, CommandIo& io) {
  CLI::App app("Why a run looks as it does: measurement validity, then ranked bottleneck hypotheses with evidence "
               "and the one-variable experiment that proves each",
               argv[0]);
  std::string dir;
  bool json = false;
  app.add_option("run_dir", dir, "A run directory (bench, run, or a sweep's points/NN-*)")->required();
  app.add_flag("--json", json, "Print the diagnosis as JSON (schema infereng.diagnose/1)");
  if (int rc = ParseArgs(app, argc, argv, io); rc >= 0) return rc;
  Result<job::Diagnosis> d = job::Diagnose(dir);
  if (!d.ok()) return ReportError(io, "diagnose", d.status());
  if (json) {
    io.out << job::DiagnosisToJson(*d).dump(2) << "\n";
  } else {
    io.out << job::DiagnosisToMarkdown(*d);
  }
  return d->client_shaped ? 1 : 0;
}

}  // namespace infereng::cli
