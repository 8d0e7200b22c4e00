#include "twin/cost_caveats.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fit/fit_test_util.h"

namespace infereng::twin {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using fit::test::Make;

TEST(CostCaveats, NoneWhereTheDefaultsWereChecked) {
  const CostKnobs none;
  EXPECT_THAT(CostCaveats(Make("llama-3.1-70b", "h100-sxm", 4, 4), none), IsEmpty());
  EXPECT_THAT(CostCaveats(Make("llama-3.1-70b", "h200", 8, 8), none), IsEmpty());
  EXPECT_THAT(CostCaveats(Make("llama-3.1-8b", "a100-80gb"), none), IsEmpty());  // A100 at TP1: S2's rows
}

TEST(CostCaveats, A100TensorParallelCollectivesAreMeasuredSlowerThanPriced) {
  CostKnobs set;
  const fit::Deployment d = Make("llama-3.1-8b", "a100-80gb", 2, 2);
  EXPECT_THAT(CostCaveats(d, set), ElementsAre(AllOf(HasSubstr("tensor parallelism on a100-80gb"),
                                                     HasSubstr("1.4-2.2x"), HasSubstr("cost.collective_launch"))));
  // Either collective key set: the user has taken the price in hand.
  set.collective_launch_s = 50e-6;
  EXPECT_THAT(CostCaveats(d, set), IsEmpty());
  set = CostKnobs{};
  set.eff_interconnect = 0.55;
  EXPECT_THAT(CostCaveats(d, set), IsEmpty());
}

TEST(CostCaveats, AnAcceleratorNobodyCheckedSaysSoUntilBothEfficienciesAreSet) {
  CostKnobs set;
  EXPECT_THAT(CostCaveats(Make("llama-3.1-8b", "l40s"), set),
              ElementsAre(AllOf(HasSubstr("on l40s they are unchecked"), HasSubstr("infereng profile"),
                                ::testing::Not(HasSubstr("collectives")))));
  EXPECT_THAT(CostCaveats(Make("llama-3.1-8b", "l40s", 2, 2), set),
              ElementsAre(HasSubstr("and so are its tensor-parallel collectives")));
  set.eff_flops = 0.4;  // one of the two: still unchecked
  EXPECT_EQ(CostCaveats(Make("llama-3.1-8b", "l40s"), set).size(), 1u);
  set.eff_bandwidth = 0.7;
  EXPECT_THAT(CostCaveats(Make("llama-3.1-8b", "l40s"), set), IsEmpty());
  // Both set, but tensor parallelism still priced by the default collective model.
  EXPECT_THAT(CostCaveats(Make("llama-3.1-8b", "l40s", 2, 2), set),
              ElementsAre(AllOf(HasSubstr("tensor parallelism on l40s"), HasSubstr("unchecked"))));
  set.collective_launch_s = 30e-6;
  EXPECT_THAT(CostCaveats(Make("llama-3.1-8b", "l40s", 2, 2), set), IsEmpty());
}

}  // namespace
}  // namespace infereng::twin
