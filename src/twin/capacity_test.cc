// Capacity's candidate screening: a deployment that cannot host the model is a verdict on
// that candidate; a wrong input is an error, whatever its message says (the search used
// to decide by looking for "deployment" in the error text). Also the twin setup the
// search resolves: `--set cost.*` knobs reach the deployment.
#include "twin/capacity.h"

#include <gtest/gtest.h>

#include "card/card_parser.h"
#include "catalog/catalog.h"
#include "twin/setup.h"

namespace infereng::twin {
namespace {

const catalog::Catalog& Builtin() {
  static const catalog::Catalog c = [] {
    auto r = catalog::Catalog::Load();
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : catalog::Catalog();
  }();
  return c;
}

card::WorkloadCard Card(const std::string& model_line) {
  const std::string yaml = "name: cap\n"
                           "traffic:\n  arrival: {process: poisson, rate: 2rps}\n"
                           "  input_tokens: {fixed: 200}\n  output_tokens: {fixed: 20}\n"
                           "slo:\n  ttft: {p99: 2s}\n"
                           "model:\n  " + model_line + "\n"
                           "deployment:\n  accelerator: l4\n"
                           "bench:\n  duration: 10s\n  warmup: 0s\n";
  auto c = card::ParseCard(yaml, "cap.yaml");
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? *c : card::WorkloadCard();
}

TEST(CapacityCandidates, ADeploymentTooSmallIsAVerdictNotAnError) {
  SetupOptions so;
  so.accelerator = "l4";
  so.count = so.tp = 1;
  auto c = ResolveCandidate(Card("architecture: llama-3.1-405b"), so, Builtin());
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_FALSE(c->setup.has_value());
  EXPECT_NE(c->does_not_fit.find("does not fit"), std::string::npos) << c->does_not_fit;

  auto fits = ResolveCandidate(Card("architecture: llama-3.1-8b"), so, Builtin());
  ASSERT_TRUE(fits.ok()) << fits.status().ToString();
  EXPECT_TRUE(fits->setup.has_value());
  EXPECT_TRUE(fits->does_not_fit.empty());
}

TEST(CapacityCandidates, AnUnknownModelIsAnErrorEvenWhenItsNameSaysDeployment) {
  CapacityOptions o;
  o.accelerators = {"l4"};
  o.counts = {1};
  o.duration_s = 10;
  auto r = SearchCapacity(Card("id: acme/deployment-7b"), Builtin(), o);
  ASSERT_FALSE(r.ok()) << "every candidate was judged 'does not fit' instead";
  EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(r.status().message().find("acme/deployment-7b"), std::string::npos) << r.status().message();
}


// cost.layer_overhead, cost.interconnect_latency and cost.collective_launch reach the deployment the cost model is
// built from, and each makes a tensor-parallel decode step slower.
TEST(TwinSetupTest, LayerOverheadAndCollectiveLatencyAreSettable) {
  auto base_card = Card("architecture: llama-3.1-70b");
  base_card.deployment.accelerator = "h100-sxm";
  base_card.deployment.count = base_card.deployment.tp = 4;
  auto step = [&](std::vector<std::string> sets) {
    SetupOptions so;
    so.sets = std::move(sets);
    auto s = ResolveTwin(base_card, so, Builtin());
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    if (!s.ok()) return std::pair<double, fit::Deployment>{0, {}};
    return std::pair<double, fit::Deployment>{s->cost->StepSeconds(StepShape{.decode_seqs = 8, .decode_context = 8000}),
                                              *s->deployment};
  };
  const auto [base, d0] = step({});
  const auto [layered, d1] = step({"cost.layer_overhead=15us"});
  const auto [linked, d2] = step({"cost.interconnect_latency=10us"});
  const auto [launched, d3] = step({"cost.collective_launch=35us"});
  EXPECT_DOUBLE_EQ(d0.eff.layer_overhead_s, 10e-6);  // the catalog default (FIDELITY.md)
  EXPECT_DOUBLE_EQ(d1.eff.layer_overhead_s, 15e-6);
  EXPECT_DOUBLE_EQ(d2.accel.interconnect_latency_s, 10e-6);
  EXPECT_DOUBLE_EQ(d0.eff.collective_launch_s, 20e-6);  // the engine-level default (data/README.md)
  EXPECT_DOUBLE_EQ(d3.eff.collective_launch_s, 35e-6);
  EXPECT_NEAR(layered - base, 80 * 5e-6, 1e-9) << "80 layers x 5 us more";
  // TP 4: 2 all-reduces per layer, each 2 x (4 - 1) ring hops: 960 hops, each 9.4 us slower.
  EXPECT_NEAR(linked - base, 960 * (10e-6 - d0.accel.interconnect_latency_s), 1e-9);
  // 160 all-reduce calls, each launched 15 us slower than the 20 us default.
  EXPECT_NEAR(launched - base, 160 * 15e-6, 1e-9);
  SetupOptions bad;
  bad.sets = {"cost.layer_overhead=soon"};
  EXPECT_FALSE(ResolveTwin(base_card, bad, Builtin()).ok());
}

// The twin's description names a scheduler other than the default, and the llama.cpp
// slots with their context.
TEST(TwinSetupTest, TheDescriptionNamesANonDefaultScheduler) {
  auto base_card = Card("architecture: llama-3.1-8b");
  base_card.deployment.accelerator = "h100-sxm";
  auto describe = [&](std::vector<std::string> sets) {
    SetupOptions so;
    so.sets = std::move(sets);
    auto s = ResolveTwin(base_card, so, Builtin());
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? s->description : std::string();
  };
  EXPECT_EQ(describe({}).find("scheduler"), std::string::npos);
  EXPECT_NE(describe({"engine.scheduler=trtllm"}).find(", trtllm scheduler"), std::string::npos);
  EXPECT_NE(describe({"engine.scheduler=llamacpp", "engine.slots=4", "engine.kv_cache_tokens=4096"})
                .find(", llamacpp scheduler (4 slots of 1024 tokens)"),
            std::string::npos);
}

}  // namespace
}  // namespace infereng::twin
