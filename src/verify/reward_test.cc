#include "verify/reward.h"

#include <gtest/gtest.h>

namespace anvil {
namespace {

Verdict WithStatus(VerdictStatus s, double q) {
  Verdict v;
  v.status = s;
  v.correctness_rate = q;
  return v;
}

TEST(RewardTest, FailuresAreMinusOne) {
  for (auto s :
       {VerdictStatus::kCompileError, VerdictStatus::kRuntimeError, VerdictStatus::kTimeout, VerdictStatus::kCheat}) {
    EXPECT_EQ(ComputeReward(WithStatus(s, 1.0), {}), -1.0) << StatusName(s);
  }
}

TEST(RewardTest, TheMachinesFailureCarriesNoReward) {
  EXPECT_FALSE(ComputeReward(WithStatus(VerdictStatus::kInfraError, 0.0), {}).has_value());
  EXPECT_FALSE(ComputeReward(WithStatus(VerdictStatus::kInfraError, 1.0), {}).has_value());
}

TEST(RewardTest, PartialCorrectnessIsLinear) {
  EXPECT_EQ(ComputeReward(WithStatus(VerdictStatus::kWrongAnswer, 0.0), {}), -1.0);
  EXPECT_DOUBLE_EQ(ComputeReward(WithStatus(VerdictStatus::kWrongAnswer, 0.6), {}).value(), -0.2);
}

TEST(RewardTest, PassRewardsCappedSpeedup) {
  Verdict v = WithStatus(VerdictStatus::kPass, 1.0);
  v.perf.speedup_eager = 0.5;
  EXPECT_DOUBLE_EQ(ComputeReward(v, {}).value(), 1.0);  // Slower than eager: no bonus.
  v.perf.speedup_eager = 3.0;
  EXPECT_DOUBLE_EQ(ComputeReward(v, {}).value(), 2.0);  // 1 + 0.5 * 2
  v.perf.speedup_eager = 100.0;
  EXPECT_DOUBLE_EQ(ComputeReward(v, {}).value(), 3.0);  // Capped at nu_max = 4.
  RewardOptions o;
  o.lambda = 1.0;
  o.nu_max = 1.0;
  o.against_compile = true;
  v.perf.speedup_compile = 1.5;
  EXPECT_DOUBLE_EQ(ComputeReward(v, o).value(), 1.5);
}

TEST(RewardTest, PassWithoutTimingGetsBaseReward) {
  EXPECT_DOUBLE_EQ(ComputeReward(WithStatus(VerdictStatus::kPass, 1.0), {}).value(), 1.0);
}

}  // namespace
}  // namespace anvil
