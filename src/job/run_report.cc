#include "job/run_report.h"

#include "job/diagnose.h"
#include "job/manifest.h"
#include "job/prediction.h"

namespace infereng::job {

RunReport WriteRunReport(const bench::BenchOptions& opt, const bench::BenchResult& res,
                         const RunReportOptions& options) {
  RunReport out;
  if (options.predict) out.prediction = WriteTwinPrediction(opt, options.engine_speedup, opt.out_dir, &res.summary);
  // The diagnosis first: the report shows it (DIR/diagnose.json, report/engine_sections.h).
  if (Result<Diagnosis> d = Diagnose(opt.out_dir); d.ok()) {
    out.diagnosis = WriteJsonFile(opt.out_dir + "/diagnose.json", DiagnosisToJson(*d));
  } else {
    out.diagnosis = d.status();
  }
  Result<report::ReportFiles> rep = report::WriteReport(opt.out_dir);
  if (rep.ok()) {
    out.files = std::move(rep).value();
  } else {
    out.report = rep.status();
  }
  return out;
}

RunOutcome JudgeRun(const bench::BenchResult& res) {
  if (res.interrupted) return RunOutcome::kInterrupted;
  if (res.target_down) return RunOutcome::kTargetDown;
  const auto& c = res.summary.counts;
  // Not an SLO miss: nothing worked (a wrong model, a missing key, a broken endpoint).
  if (c.failed > 0 && c.succeeded == 0) return RunOutcome::kAllFailed;
  return res.verdict.pass ? RunOutcome::kPass : RunOutcome::kCheckFailed;
}

}  // namespace infereng::job
