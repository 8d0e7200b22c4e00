// Capacity's candidate screening: a deployment that cannot host the model is a verdict on
// that candidate; a wrong input is an error, whatever its message says (the search used
// to decide by looking for "deployment" in the error text).
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

}  // namespace
}  // namespace infereng::twin
