// JobEngine: the one "engine a job measures" lifecycle of run and sweep.
#include "job/embedded_engine.h"

#include <gtest/gtest.h>

namespace infereng::job {
namespace {

EmbeddedOptions Options(double speedup, uint64_t seed = 42) {
  EmbeddedOptions o;
  o.speedup = speedup;
  o.seed = seed;
  return o;
}

TEST(JobEngine, ATargetIsUsedAsGivenAndNothingStarts) {
  Result<JobEngine> e = JobEngine::Open("http://10.0.0.1:8000/v1", card::WorkloadCard{}, Options(4));
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_FALSE(e->embedded());
  EXPECT_EQ(e->url(), "http://10.0.0.1:8000/v1");
  EXPECT_EQ(e->speedup(), 1.0);  // a real engine runs on the wall clock
  bench::BenchOptions opt;
  e->Apply(&opt);
  EXPECT_EQ(opt.target, "http://10.0.0.1:8000/v1");
  EXPECT_TRUE(opt.extra_manifest.is_null());
}

TEST(JobEngine, WithoutATargetAnEmbeddedEngineServesUntilStopped) {
  card::WorkloadCard card;
  card.model.id = "tiny";
  Result<JobEngine> e = JobEngine::Open("", card, Options(8, 7));
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_TRUE(e->embedded());
  EXPECT_EQ(e->url().rfind("http://127.0.0.1:", 0), 0u) << e->url();
  EXPECT_EQ(e->speedup(), 8.0);
  bench::BenchOptions opt;
  e->Apply(&opt);
  EXPECT_EQ(opt.target, e->url());
  EXPECT_EQ(opt.extra_manifest["embedded_server"]["speedup"], 8.0);
  EXPECT_EQ(opt.extra_manifest["embedded_server"]["model_name"], "tiny");
  e->Stop();
  e->Stop();  // idempotent; the destructor stops it again
}

TEST(JobEngine, ABadSpeedupIsAnErrorBeforeAnythingStarts) {
  Result<JobEngine> e = JobEngine::Open("", card::WorkloadCard{}, Options(0));
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().code(), Status::Code::kInvalidArgument);
}

}  // namespace
}  // namespace infereng::job
