#include "pipeline/runtime_outcome.h"

#include <gtest/gtest.h>

#include "integrity/static_legal.h"

namespace anvil {
namespace {

constexpr std::uintmax_t kMiB = std::uintmax_t{1} << 20;

// A run that failed with ENOSPC while writing its outputs (an H200 bench run
// whose disk two passes of prepared tasks had filled) is anvil's fault.
TEST(DiskFullProblemTest, AFullDiskTheCandidateDidNotFillIsAnvilsProblem) {
  auto problem = DiskFullProblem("/tmp/anvil-eval-x/trials", 20 * kMiB, 200 * kMiB, 400 * kMiB);
  ASSERT_TRUE(problem.has_value());
  EXPECT_NE(problem->find("/tmp/anvil-eval-x has only 20 MiB free: the candidate's run"), std::string::npos)
      << *problem;
  EXPECT_NE(problem->find("anvil cache prune"), std::string::npos) << *problem;
}

TEST(DiskFullProblemTest, RoomOnTheDiskMeansTheFailureIsTheCandidates) {
  EXPECT_FALSE(DiskFullProblem("/tmp/w/trials", kDiskLowBytes, 0, 0).has_value());
}

// Filling the disk on purpose must not turn a failure into a neutral
// infra_error: the candidate's folder holds far more than the task explains.
TEST(DiskFullProblemTest, ACandidateThatFilledTheDiskItselfKeepsItsVerdict) {
  EXPECT_FALSE(DiskFullProblem("/tmp/w/trials", 0, 40 * kDiskLowBytes, 400 * kMiB).has_value());
  EXPECT_TRUE(DiskFullProblem("/tmp/w/trials", 0, 400 * kMiB + kDiskLowBytes, 400 * kMiB).has_value());
}

RuleHit Hit(const std::string& rule, const std::string& severity) {
  RuleHit h;
  h.rule = rule;
  h.severity = severity;
  h.message = "m";
  return h;
}

TEST(PolicyTest, AllowedStaticHitsBecomeEvidenceAndTheOthersStillDecide) {
  LegalGate gate;
  gate.hits = {Hit("py.torch_compute", "cheat"), Hit("py.stream", "evidence")};
  gate.ok = false;
  AllowByPolicy(PolicyNamed("kernelbench").value(), gate);
  EXPECT_TRUE(gate.ok);
  EXPECT_EQ(gate.hits[0].severity, "evidence");
  EXPECT_NE(gate.hits[0].message.find("policy kernelbench allows it"), std::string::npos);
  gate.hits.push_back(Hit("kb.code_bypass", "cheat"));
  AllowByPolicy(PolicyNamed("kernelbench").value(), gate);
  EXPECT_FALSE(gate.ok);
  LegalGate musacoder;
  musacoder.hits = {Hit("py.torch_compute", "cheat")};
  AllowByPolicy(Policy(), musacoder);
  EXPECT_FALSE(musacoder.ok);
  EXPECT_EQ(musacoder.hits[0].severity, "cheat");
}

TEST(PolicyTest, AnAllowedRuntimeFindingIsRecordedWithoutDecidingTheVerdict) {
  Verdict v;
  v.status = VerdictStatus::kPass;
  v.policy = PolicyNamed("kernelbench").value();
  v.run.aten_compute = {"aten.relu.default x5"};
  EXPECT_FALSE(ForwardTraceCheat(v));
  EXPECT_EQ(v.status, VerdictStatus::kPass);
  ASSERT_EQ(v.legal.hits.size(), 1u);
  EXPECT_EQ(v.legal.hits[0].rule, "run.aten_compute");
  EXPECT_EQ(v.legal.hits[0].severity, "evidence");
  EXPECT_TRUE(v.perf.skipped.empty());
  // run.host_compute is never allowed: it still decides, after the allowed finding.
  v.run.host_compute = {"Tensor.numpy x1"};
  v.legal.hits.clear();
  EXPECT_TRUE(ForwardTraceCheat(v));
  EXPECT_EQ(v.status, VerdictStatus::kCheat);
  EXPECT_EQ(v.legal.hits.back().rule, "run.host_compute");
  Verdict m;
  m.run.aten_compute = {"aten.relu.default x5"};
  EXPECT_TRUE(ForwardTraceCheat(m));
  EXPECT_EQ(m.status, VerdictStatus::kCheat);
}

}  // namespace
}  // namespace anvil
