#include "pipeline/runtime_outcome.h"

#include <gtest/gtest.h>

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

TEST(DiskFullProblemTest, ABuildThatFailedOnAFullDiskIsAnvilsProblem) {
  auto problem = BuildDiskFullProblem("/cache/artifacts", 5 * kMiB);
  ASSERT_TRUE(problem.has_value());
  EXPECT_NE(problem->find("/cache/artifacts has only 5 MiB free: the candidate's build failed"), std::string::npos)
      << *problem;
  EXPECT_FALSE(BuildDiskFullProblem("/cache/artifacts", kDiskLowBytes).has_value());
}

}  // namespace
}  // namespace anvil
