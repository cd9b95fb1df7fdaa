#include "report/metrics.h"

#include <gtest/gtest.h>

#include <cmath>

namespace anvil {
namespace {

SampleRecord Rec(int level, int problem, int sample, const std::string& status, double eager = 0, double compile = 0) {
  SampleRecord r;
  r.level = level;
  r.problem = problem;
  r.sample = sample;
  r.status = status;
  r.correctness_rate = status == "pass" ? 1.0 : 0.0;
  r.speedup_eager = eager;
  r.speedup_compile = compile;
  return r;
}

TEST(MetricsTest, PassAtKMatchesHandComputedValues) {
  EXPECT_DOUBLE_EQ(PassAtK(5, 2, 1), 0.4);  // c / n
  EXPECT_DOUBLE_EQ(PassAtK(5, 2, 5), 1.0);  // n - c < k
  EXPECT_DOUBLE_EQ(PassAtK(4, 1, 2), 0.5);  // 1 - C(3,2)/C(4,2) = 1 - 3/6
  EXPECT_DOUBLE_EQ(PassAtK(4, 0, 2), 0.0);
  EXPECT_DOUBLE_EQ(PassAtK(4, 4, 1), 1.0);
  EXPECT_NEAR(PassAtK(8, 2, 4), 1.0 - 15.0 / 70.0, 1e-12);  // 1 - C(6,4)/C(8,4)
}

TEST(MetricsTest, PassAtKIsStableForLargeN) {
  // C(2000, 1000) overflows a double; the product form does not. Compare with log-gamma.
  auto log_choose = [](int n, int k) { return std::lgamma(n + 1.0) - std::lgamma(k + 1.0) - std::lgamma(n - k + 1.0); };
  double expected = 1.0 - std::exp(log_choose(1997, 1000) - log_choose(2000, 1000));
  EXPECT_NEAR(PassAtK(2000, 3, 1000), expected, 1e-9);
  EXPECT_DOUBLE_EQ(PassAtK(1000, 1, 500), 0.5);
}

TEST(MetricsTest, PerLevelPassAvgAndFaster) {
  // Level 1: problem 1 passes 2 of 4 samples, problem 2 passes 1 of 4.
  std::vector<SampleRecord> records = {
      Rec(1, 1, 0, "pass", 2.0, 1.0), Rec(1, 1, 1, "pass", 0.5, 0.25), Rec(1, 1, 2, "wrong_answer"),
      Rec(1, 1, 3, "compile_error"),  Rec(1, 2, 0, "runtime_error"),   Rec(1, 2, 1, "pass", 1.2, 1.05),
      Rec(1, 2, 2, "timeout"),        Rec(1, 2, 3, "cheat"),
  };
  RunMetrics m = ComputeMetrics(records, {});
  ASSERT_EQ(m.levels.size(), 1u);
  const LevelMetrics& l = m.levels[0];
  EXPECT_EQ(l.level, 1);
  EXPECT_EQ(l.problems, 2);
  EXPECT_EQ(l.samples, 8);
  EXPECT_EQ(l.passed, 3);
  EXPECT_EQ(l.samples_min, 4);
  EXPECT_EQ(l.samples_max, 4);
  EXPECT_DOUBLE_EQ(l.pass_at_1, 100.0 * (0.5 + 0.25) / 2);  // 37.5
  EXPECT_DOUBLE_EQ(l.pass_at_n, 100.0);                     // Both problems have a pass.
  EXPECT_DOUBLE_EQ(l.avg_at_n, 37.5);
  EXPECT_DOUBLE_EQ(l.mean_correctness, 3.0 / 8);
  // Faster than 1.1x: eager 2.0 and 1.2 -> 2 of 8; compile none (1.05 is not > 1.1).
  EXPECT_DOUBLE_EQ(l.faster_eager, 25.0);
  EXPECT_DOUBLE_EQ(l.faster_compile, 0.0);
  EXPECT_EQ(l.speedup_eager.samples, 3);
  EXPECT_NEAR(l.speedup_eager.geomean, std::cbrt(2.0 * 0.5 * 1.2), 1e-12);
  EXPECT_NEAR(l.speedup_compile.geomean, std::cbrt(1.0 * 0.25 * 1.05), 1e-12);
  EXPECT_EQ(l.by_status.at("pass"), 3);
  EXPECT_EQ(l.by_status.at("cheat"), 1);
}

TEST(MetricsTest, FastPUsesSampleZeroOfEveryProblem) {
  // Problem 1: sample 0 passes at 1.6x. Problem 2: sample 0 fails although sample 1 passes at 3x.
  // Problem 3: sample 0 passes at 0.9x. Problem 4: no sample 0.
  std::vector<SampleRecord> records = {
      Rec(2, 1, 0, "pass", 1.6), Rec(2, 2, 0, "wrong_answer"), Rec(2, 2, 1, "pass", 3.0),
      Rec(2, 3, 0, "pass", 0.9), Rec(2, 4, 1, "pass", 5.0),
  };
  RunMetrics m = ComputeMetrics(records, {});
  const LevelMetrics& l = m.levels[0];
  EXPECT_EQ(l.problems, 4);
  EXPECT_EQ(l.sample0_missing, 1);
  ASSERT_EQ(l.fast_p.size(), 6u);
  const double expected[] = {0.5, 0.5, 0.5, 0.25, 0.25, 0.0};  // p = 0, 0.5, 0.8, 1.0, 1.5, 2.0
  for (int i = 0; i < 6; ++i) EXPECT_DOUBLE_EQ(l.fast_p[i].fraction, expected[i]) << "p=" << l.fast_p[i].p;
}

TEST(MetricsTest, ThresholdIsConfigurable) {
  std::vector<SampleRecord> records = {Rec(1, 1, 0, "pass", 1.05, 1.3), Rec(1, 1, 1, "pass", 1.5, 0.8)};
  MetricsOptions o;
  o.faster_than = 1.0;
  RunMetrics m = ComputeMetrics(records, o);
  EXPECT_DOUBLE_EQ(m.overall.faster_eager, 100.0);
  EXPECT_DOUBLE_EQ(m.overall.faster_compile, 50.0);
  o.faster_than = 2.0;
  m = ComputeMetrics(records, o);
  EXPECT_DOUBLE_EQ(m.overall.faster_eager, 0.0);
}

TEST(MetricsTest, UnevenSampleCountsClampKAndOverallSpansLevels) {
  // Level 1 problem 1: 2 samples, 1 pass. Level 3 problem 1: 4 samples, 1 pass. N = 4.
  std::vector<SampleRecord> records = {
      Rec(1, 1, 0, "pass"),         Rec(1, 1, 1, "wrong_answer"), Rec(3, 1, 0, "wrong_answer"),
      Rec(3, 1, 1, "wrong_answer"), Rec(3, 1, 2, "pass"),         Rec(3, 1, 3, "infra_error"),
  };
  RunMetrics m = ComputeMetrics(records, {});
  ASSERT_EQ(m.levels.size(), 2u);
  EXPECT_EQ(m.levels[0].level, 1);
  EXPECT_EQ(m.levels[1].level, 3);
  // The infra_error leaves n: level 3 problem 1 has n = 3, c = 1.
  EXPECT_DOUBLE_EQ(m.levels[1].pass_at_1, 100.0 / 3);
  EXPECT_DOUBLE_EQ(m.levels[1].pass_at_n, 100.0);
  EXPECT_EQ(m.levels[1].unjudged, 1);
  const LevelMetrics& all = m.overall;
  EXPECT_EQ(all.level, 0);
  EXPECT_EQ(all.problems, 2);  // Same problem number, different levels.
  EXPECT_EQ(all.samples_min, 2);
  EXPECT_EQ(all.samples_max, 4);
  EXPECT_DOUBLE_EQ(all.pass_at_1, 100.0 * (0.5 + 1.0 / 3) / 2);
  EXPECT_DOUBLE_EQ(all.pass_at_n, 100.0);  // Level 1 problem: k clamped to its 2 samples.
  EXPECT_NEAR(all.avg_at_n, 100.0 * 2 / 5, 1e-12);
  EXPECT_EQ(all.problems_judged(), 2);
  // Passing samples without timings: unknown speedups, not faster.
  EXPECT_EQ(all.speedup_unknown, 2);
  EXPECT_EQ(all.speedup_eager.samples, 0);
  EXPECT_DOUBLE_EQ(all.speedup_eager.geomean, 0.0);
  EXPECT_DOUBLE_EQ(all.faster_eager, 0.0);
}

TEST(MetricsTest, MachineFailuresLeaveNAndAProblemLeftWithNoneFails) {
  // Problem 1: pass, wrong_answer, infra_error -> n = 2, c = 1. Problem 2: infra_error and server_error only.
  std::vector<SampleRecord> records = {
      Rec(1, 1, 0, "pass", 2.0),   Rec(1, 1, 1, "wrong_answer"), Rec(1, 1, 2, "infra_error"),
      Rec(1, 2, 0, "infra_error"), Rec(1, 2, 1, "server_error"),
  };
  RunMetrics m = ComputeMetrics(records, {});
  const LevelMetrics& l = m.overall;
  EXPECT_EQ(l.problems, 2);
  EXPECT_EQ(l.problems_judged(), 1);
  ASSERT_EQ(l.unjudged_problems.size(), 1u);
  EXPECT_EQ(l.unjudged_problems[0], "level 1 problem 2");
  EXPECT_EQ(l.samples, 5);
  EXPECT_EQ(l.unjudged, 3);
  EXPECT_EQ(l.samples_max, 3);
  EXPECT_DOUBLE_EQ(l.pass_at_1, 100.0 * (0.5 + 0) / 2);  // Problem 2 fails.
  EXPECT_DOUBLE_EQ(l.pass_at_n, 100.0 * (1.0 + 0) / 2);  // k clamped to problem 1's n = 2.
  EXPECT_DOUBLE_EQ(l.avg_at_n, 50.0);                    // 1 of the 2 judged samples.
  EXPECT_DOUBLE_EQ(l.faster_eager, 50.0);
  EXPECT_DOUBLE_EQ(l.mean_correctness, 0.5);
  EXPECT_DOUBLE_EQ(l.fast_p[0].fraction, 0.5);  // Problem 2's sample 0 is not a pass.
  EXPECT_EQ(l.by_status.at("infra_error"), 2);
  EXPECT_TRUE(MachineFailure("server_error"));
  EXPECT_FALSE(MachineFailure("timeout"));
}

TEST(MetricsTest, DegenerateProblemsAreNamedAndCanBeLeftOut) {
  SampleRecord zero = Rec(2, 83, 0, "pass");
  zero.degenerate = true;
  SampleRecord zero_again = Rec(2, 83, 1, "wrong_answer");  // Compiled wrong: no prepared task, no flag.
  std::vector<SampleRecord> records = {zero, zero_again, Rec(2, 1, 0, "wrong_answer")};
  EXPECT_EQ(DegenerateProblems(records), std::vector<std::string>{"level 2 problem 83"});
  const std::vector<SampleRecord> rest = WithoutDegenerate(records);
  ASSERT_EQ(rest.size(), 1u);
  EXPECT_EQ(rest[0].problem, 1);
  EXPECT_TRUE(DegenerateProblems(rest).empty());
}

TEST(MetricsTest, LaterDuplicateWinsAndEmptyInputIsEmpty) {
  RunMetrics m = ComputeMetrics({Rec(1, 1, 0, "infra_error"), Rec(1, 1, 0, "pass")}, {});
  EXPECT_EQ(m.overall.samples, 1);
  EXPECT_DOUBLE_EQ(m.overall.avg_at_n, 100.0);
  RunMetrics empty = ComputeMetrics({}, {});
  EXPECT_TRUE(empty.levels.empty());
  EXPECT_EQ(empty.overall.problems, 0);
  EXPECT_DOUBLE_EQ(empty.overall.pass_at_1, 0.0);
}

TEST(MetricsTest, ProblemsAreTasksWhenRecordsNameThem) {
  // Two unnumbered tasks without a level: two problems of level 0, not one; the whole run is its own row.
  SampleRecord a = Rec(0, 0, 0, "pass");
  a.task = "level 0 relu aaaa";
  SampleRecord b = Rec(0, 0, 0, "compile_error");
  b.task = "level 0 softmax bbbb";
  SampleRecord b1 = Rec(0, 0, 1, "pass");
  b1.task = b.task;
  const RunMetrics m = ComputeMetrics({a, b, b1}, {});
  ASSERT_EQ(m.levels.size(), 1u);
  EXPECT_EQ(m.levels[0].level, 0);
  EXPECT_FALSE(m.levels[0].whole_run);
  EXPECT_EQ(m.levels[0].problems, 2);
  EXPECT_EQ(m.levels[0].samples, 3);
  EXPECT_DOUBLE_EQ(m.levels[0].pass_at_1, 75.0);  // (1 + 1/2) / 2 problems.
  EXPECT_TRUE(m.overall.whole_run);
  EXPECT_EQ(m.overall.problems, 2);
}

}  // namespace
}  // namespace anvil
