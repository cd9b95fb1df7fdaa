#include "report/kernelbench_layout.h"

#include <gtest/gtest.h>

#include <fstream>

#include "core/files.h"

namespace anvil {
namespace {

namespace fs = std::filesystem;

class KernelBenchLayoutTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = MakeTempDir("anvil-kb-layout-test-").value(); }
  void TearDown() override { (void)RemoveTree(dir_); }
  fs::path Write(const fs::path& rel, const std::string& text = "") {
    fs::create_directories((dir_ / rel).parent_path());
    std::ofstream(dir_ / rel) << text;
    return dir_ / rel;
  }
  fs::path dir_;
};

TEST(KernelBenchLayoutNameTest, ParsesKernelBenchFileNames) {
  auto id = ParseSampleFileName("level_1_problem_19_sample_3_kernel.py");
  ASSERT_TRUE(id.has_value());
  EXPECT_EQ(id->level, 1);
  EXPECT_EQ(id->problem, 19);
  EXPECT_EQ(id->sample, 3);
  EXPECT_TRUE(ParseSampleFileName("level_2_problem_100_sample_0_kernel.cu").has_value());
  EXPECT_TRUE(ParseSampleFileName("level_3_problem_7_sample_12_kernel.cpp").has_value());
}

TEST(KernelBenchLayoutNameTest, RejectsOtherNames) {
  for (const char* name : {"level_1_problem_19_sample_3_kernel.txt", "level_1_problem_19_sample_3.py",
                           "level_1_problem__sample_3_kernel.py", "level_-1_problem_1_sample_0_kernel.py",
                           "level_1_problem_1_sample_0_kernel.py.bak", "relu.py", "level1_problem_1_sample_0_kernel.py",
                           "level_1_problem_1_sample_0_kernelx.py"}) {
    EXPECT_FALSE(ParseSampleFileName(name).has_value()) << name;
  }
}

TEST_F(KernelBenchLayoutTest, MapsCandidatesToProblemFiles) {
  Write("kb/level1/19_ReLU.py");
  Write("kb/level1/1_Square_matrix_multiplication_.py");
  Write("kb/level2/3_Conv_Add.py");
  Write("run/level_1_problem_19_sample_1_kernel.py", "# anvil-expect: pass\n");
  Write("run/level_1_problem_19_sample_0_kernel.cu");
  Write("run/level_2_problem_3_sample_0_kernel.cpp");
  Write("run/level_1_problem_1_sample_0_kernel.py");
  Write("run/eval_results.json", "{}");
  auto run = ReadKernelBenchRun(dir_ / "run", dir_ / "kb");
  ASSERT_TRUE(run.ok()) << run.message();
  const auto& jobs = run.value().jobs;
  ASSERT_EQ(jobs.size(), 4u);
  EXPECT_EQ(jobs[0].id, (SampleId{1, 1, 0}));
  EXPECT_EQ(jobs[0].job.task.name, "1_Square_matrix_multiplication_");
  EXPECT_EQ(jobs[1].id, (SampleId{1, 19, 0}));
  EXPECT_EQ(jobs[1].job.candidate.filename(), "level_1_problem_19_sample_0_kernel.cu");
  EXPECT_EQ(jobs[2].id, (SampleId{1, 19, 1}));
  EXPECT_EQ(jobs[2].job.task.name, "19_ReLU");
  EXPECT_EQ(jobs[2].job.task.level, 1);
  EXPECT_EQ(jobs[2].job.expected, "pass");
  EXPECT_EQ(jobs[3].id, (SampleId{2, 3, 0}));
  EXPECT_EQ(jobs[3].job.task.name, "3_Conv_Add");
  EXPECT_TRUE(run.value().skipped.empty());
  EXPECT_TRUE(run.value().missing.empty());
}

TEST_F(KernelBenchLayoutTest, ListsMissingProblemsAndKeepsGoing) {
  Write("kb/level1/19_ReLU.py");
  Write("kb/level1/2_A.py");
  Write("kb/level1/2_B.py");
  Write("run/level_1_problem_19_sample_0_kernel.py");
  Write("run/level_1_problem_42_sample_0_kernel.py");
  Write("run/level_1_problem_42_sample_1_kernel.py");
  Write("run/level_1_problem_2_sample_0_kernel.py");
  Write("run/level_4_problem_1_sample_0_kernel.py");
  auto run = ReadKernelBenchRun(dir_ / "run", dir_ / "kb");
  ASSERT_TRUE(run.ok()) << run.message();
  ASSERT_EQ(run.value().jobs.size(), 1u);
  EXPECT_EQ(run.value().jobs[0].id, (SampleId{1, 19, 0}));
  const auto& missing = run.value().missing;
  ASSERT_EQ(missing.size(), 3u);
  EXPECT_EQ(missing[0].problem, 2);
  EXPECT_NE(missing[0].reason.find("several problem files match 2_*.py"), std::string::npos) << missing[0].reason;
  EXPECT_EQ(missing[1].problem, 42);
  EXPECT_NE(missing[1].reason.find("no problem file 42_*.py"), std::string::npos) << missing[1].reason;
  EXPECT_EQ(missing[1].files.size(), 2u);
  EXPECT_EQ(missing[2].level, 4);
  EXPECT_NE(missing[2].reason.find("no folder"), std::string::npos) << missing[2].reason;
}

TEST_F(KernelBenchLayoutTest, ReportsNamesThatDoNotMatchAndDuplicates) {
  Write("kb/level1/19_ReLU.py");
  Write("run/my_kernel.py");
  Write("run/level_1_problem_19_sample_0_kernel.cu");
  Write("run/level_1_problem_19_sample_0_kernel.py");
  Write("run/notes.txt");
  auto run = ReadKernelBenchRun(dir_ / "run", dir_ / "kb");
  ASSERT_TRUE(run.ok()) << run.message();
  ASSERT_EQ(run.value().jobs.size(), 1u);
  EXPECT_EQ(run.value().jobs[0].job.candidate.extension(), ".cu");
  const auto& skipped = run.value().skipped;
  ASSERT_EQ(skipped.size(), 2u);
  EXPECT_EQ(skipped[0].file, "level_1_problem_19_sample_0_kernel.py");
  EXPECT_NE(skipped[0].reason.find("second candidate"), std::string::npos);
  EXPECT_EQ(skipped[1].file, "my_kernel.py");
  EXPECT_NE(skipped[1].reason.find("level_{L}_problem_{P}_sample_{S}_kernel"), std::string::npos);
}

TEST_F(KernelBenchLayoutTest, AcceptsARepositoryCheckoutAsRoot) {
  Write("repo/KernelBench/level1/19_ReLU.py");
  Write("run/level_1_problem_19_sample_0_kernel.py");
  auto root = ResolveProblemRoot(dir_ / "repo");
  ASSERT_TRUE(root.ok()) << root.message();
  EXPECT_EQ(root.value(), dir_ / "repo" / "KernelBench");
  auto run = ReadKernelBenchRun(dir_ / "run", dir_ / "repo");
  ASSERT_TRUE(run.ok()) << run.message();
  EXPECT_EQ(run.value().jobs.size(), 1u);
}

TEST_F(KernelBenchLayoutTest, ErrorsNameTheMissingFolder) {
  Write("kb/README.md");
  fs::create_directories(dir_ / "run");
  auto no_levels = ReadKernelBenchRun(dir_ / "run", dir_ / "kb");
  ASSERT_FALSE(no_levels.ok());
  EXPECT_NE(no_levels.message().find("no level1/"), std::string::npos) << no_levels.message();
  auto no_run = ReadKernelBenchRun(dir_ / "nope", dir_ / "kb");
  ASSERT_FALSE(no_run.ok());
  EXPECT_NE(no_run.message().find("run folder not found"), std::string::npos);
}

}  // namespace
}  // namespace anvil
