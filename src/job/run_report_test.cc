// The outcome a bench job's exit code is decided from, in its order of precedence.
#include "job/run_report.h"

#include <gtest/gtest.h>

namespace infereng::job {
namespace {

bench::BenchResult Worked(bool pass) {
  bench::BenchResult r;
  r.summary.counts.succeeded = 10;
  r.summary.counts.failed = 1;
  r.verdict.pass = pass;
  return r;
}

TEST(RunOutcome, TheVerdictDecidesARunThatWorked) {
  EXPECT_EQ(JudgeRun(Worked(true)), RunOutcome::kPass);
  EXPECT_EQ(JudgeRun(Worked(false)), RunOutcome::kCheckFailed);
}

TEST(RunOutcome, NothingWorkedIsNotAnSloMiss) {
  bench::BenchResult r = Worked(false);
  r.summary.counts.succeeded = 0;
  EXPECT_EQ(JudgeRun(r), RunOutcome::kAllFailed);
}

TEST(RunOutcome, InterruptedThenTargetDownComeFirst) {
  bench::BenchResult r = Worked(true);
  r.summary.counts.succeeded = 0;
  r.target_down = true;
  EXPECT_EQ(JudgeRun(r), RunOutcome::kTargetDown);
  r.interrupted = true;
  EXPECT_EQ(JudgeRun(r), RunOutcome::kInterrupted);
}

}  // namespace
}  // namespace infereng::job
