#include "job/run_report.h"

#include "job/diagnose.h"
#include "job/manifest.h"
#include "job/prediction.h"

namespace infereng::job {

RunReport WriteRunReport(const bench::BenchOptions& opt, const bench::BenchResult& res,
                         const RunReportOptions& options) {
  RunReport out;
  if (options.predict) {
    Fidelity f;
    out.prediction = WriteTwinPrediction(opt, options.engine_speedup, opt.out_dir, &res.summary, &f, options.model);
    if (out.prediction.ok()) out.fidelity = std::move(f);
  }
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

std::vector<std::string> CheckFailureReasons(const bench::BenchResult& res) {
  std::vector<std::string> out;
  const bool several = res.trials.size() > 1;
  for (int t : res.verdict.failed_trials) {
    const auto i = static_cast<size_t>(t - 1);
    if (i >= res.trials.size()) continue;
    const metrics::Summary& s = res.trials[i];
    const std::string trial = several ? "trial " + std::to_string(t) + ": " : std::string();
    if (res.gate.has_slos && !s.slo_pass) out.push_back(trial + "latency SLOs missed (the SLO lines above)");
    // Trial 1's report has the breakdown; the others have their counts.
    metrics::QualityReport q = i == 0 && res.quality ? *res.quality : metrics::QualityReport{};
    if (i != 0 || !res.quality) {
      q.checked = s.counts.quality_checked;
      q.passed = s.counts.quality_passed;
    }
    q.pass_threshold = res.gate.quality_threshold;
    if (std::string why = metrics::QualityFailureReason(q); !why.empty()) out.push_back(trial + why);
  }
  return out;
}

}  // namespace infereng::job
