#include "pipeline/batch.h"

#include <gtest/gtest.h>

#include "core/temp_dir_fixture.h"

namespace anvil {
namespace {

namespace fs = std::filesystem;

using BatchTest = TempDirTest;

// Candidates waiting alive for their timed calls hold device memory: three
// places per run slot on an H200, fewer on smaller GPUs, none on a small one.
TEST(TimingQueuePlacesTest, FollowTheDevicesMemory) {
  constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;
  EXPECT_EQ(TimingQueuePlaces(std::nullopt, 2), 6);     // cpu, or nvidia-smi silent: as before.
  EXPECT_EQ(TimingQueuePlaces(143771ull << 20, 2), 6);  // H200 (140 GiB).
  EXPECT_EQ(TimingQueuePlaces(80 * kGiB, 2), 5);        // A100 80 GB.
  EXPECT_EQ(TimingQueuePlaces(40 * kGiB, 2), 2);        // A100 40 GB.
  EXPECT_EQ(TimingQueuePlaces(24 * kGiB, 2), 1);        // 24 GB cards.
  EXPECT_EQ(TimingQueuePlaces(12 * kGiB, 2), 0);        // They wait in their run slots.
  EXPECT_EQ(TimingQueuePlaces(143771ull << 20, 0), 3);  // At least one run slot.
}

TEST_F(BatchTest, ReadsExpectedStatusHeader) {
  EXPECT_EQ(ExpectedStatus(Write("a.py", "# anvil-expect: wrong_answer\nimport torch\n")), "wrong_answer");
  EXPECT_EQ(ExpectedStatus(Write("b.cpp", "// anvil-expect:   pass\n")), "pass");
  EXPECT_EQ(ExpectedStatus(Write("c.py", "import torch\n")), "");
}

TEST_F(BatchTest, MatchesTaskTreeWithCandidateFolders) {
  Write("tasks/level1/relu.py", "");
  Write("tasks/level1/gelu.py", "");
  Write("cands/relu/a.py", "# anvil-expect: pass\n");
  Write("cands/relu/b.cu", "");
  Write("cands/relu/notes.txt", "");
  auto jobs = JobsForTree(dir_ / "tasks", dir_ / "cands");
  ASSERT_TRUE(jobs.ok()) << jobs.message();
  ASSERT_EQ(jobs.value().size(), 2u);
  EXPECT_EQ(jobs.value()[0].task.name, "relu");
  EXPECT_EQ(jobs.value()[0].expected, "pass");
  EXPECT_EQ(jobs.value()[1].candidate.filename(), "b.cu");
}

TEST_F(BatchTest, TreeWithoutMatchesSaysWhatItExpected) {
  Write("tasks/relu.py", "");
  fs::create_directories(dir_ / "cands");
  auto jobs = JobsForTree(dir_ / "tasks", dir_ / "cands");
  ASSERT_FALSE(jobs.ok());
  EXPECT_NE(jobs.message().find("folders named after tasks"), std::string::npos);
}

TEST_F(BatchTest, ReadsJsonlRelativeToTheFile) {
  Write("t/relu.py", "");
  Write("c/x.cpp", "");
  fs::path list = Write("jobs.jsonl",
                        "{\"task\": \"t/relu.py\", \"candidate\": \"c/x.cpp\"}\n\n"
                        "{\"task\": \"t/relu.py\", \"candidate\": \"c/x.cpp\"}\n");
  auto jobs = JobsFromList(list);
  ASSERT_TRUE(jobs.ok()) << jobs.message();
  ASSERT_EQ(jobs.value().size(), 2u);
  EXPECT_EQ(jobs.value()[1].candidate, dir_ / "c/x.cpp");
}

TEST_F(BatchTest, MalformedJsonlNamesTheLine) {
  Write("t/relu.py", "");
  fs::path list = Write("jobs.jsonl", "{\"task\": \"t/relu.py\", \"candidate\": \"x\"}\n{\"task\": 3}\n");
  auto jobs = JobsFromList(list);
  ASSERT_FALSE(jobs.ok());
  EXPECT_NE(jobs.message().find("jobs.jsonl:2"), std::string::npos);
}

TEST_F(BatchTest, MissingCandidateIsAnError) {
  Task t;
  t.name = "relu";
  EXPECT_FALSE(JobsForTask(t, {dir_ / "missing.py"}).ok());
}

}  // namespace
}  // namespace anvil
