#include "run/worker_report.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "core/temp_dir_fixture.h"

namespace anvil {
namespace {

// A tensor folder as the worker writes it (tensors.json and one float32 file of 4 elements), and the seal line it
// sends for it: elements 1 and 3.
class WorkerReportTest : public TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    Write("trial_0/tensors.json",
          R"({"version": 1, "tensors": [{"name": "out0", "dtype": "float32", "shape": [4], "file": "out0.bin"}]})");
    const float values[4] = {0.f, 1.f, 2.f, 3.f};
    std::ofstream(dir_ / "trial_0" / "out0.bin", std::ios::binary)
        .write(reinterpret_cast<const char*>(values), sizeof values);
  }
  // 1.0f and 3.0f, little-endian.
  const std::string seal_ =
      R"({"kind": "seal", "dir": "trial_0", "tensors": [{"name": "out0", "shape": [4], "itemsize": 4,)"
      R"( "points": [[1, "0000803f"], [3, "00004040"]]}]})";
};

TEST_F(WorkerReportTest, FilesAsTheWorkerSealedThemPass) {
  RunOutcome out;
  JudgeWorkerReport({seal_}, false, dir_, true, out);
  EXPECT_TRUE(out.forged.empty()) << out.forged[0];
}

TEST_F(WorkerReportTest, AnOutputRewrittenAfterItsSealIsForged) {
  // The candidate's code writes the right answer over what its forward returned (catalog D5: computed later).
  std::fstream f(dir_ / "trial_0" / "out0.bin", std::ios::binary | std::ios::in | std::ios::out);
  const float other = 7.f;
  f.seekp(12);
  f.write(reinterpret_cast<const char*>(&other), sizeof other);
  f.close();
  RunOutcome out;
  JudgeWorkerReport({seal_}, false, dir_, true, out);
  ASSERT_EQ(out.forged.size(), 1u);
  EXPECT_NE(out.forged[0].find("element 3"), std::string::npos) << out.forged[0];
}

TEST_F(WorkerReportTest, AFolderTheWorkerNeverSealedIsForgedOnceItRanToItsEnd) {
  Write("recheck_2/tensors.json", R"({"version": 1, "tensors": []})");
  RunOutcome out;
  JudgeWorkerReport({seal_}, false, dir_, true, out);
  ASSERT_EQ(out.forged.size(), 1u);
  EXPECT_NE(out.forged[0].find("recheck_2"), std::string::npos);
  // A worker that died (a crash, a deadline) may have written a folder it never got to seal.
  RunOutcome killed;
  JudgeWorkerReport({seal_}, false, dir_, false, killed);
  EXPECT_TRUE(killed.forged.empty());
}

TEST_F(WorkerReportTest, FindingsAddUpAndCannotBeTakenBack) {
  // The worker's own lines, then a line of the candidate's claiming nothing was seen: the union counts.
  RunOutcome out;
  out.aten_compute = {};  // aten_ops.json rewritten empty.
  JudgeWorkerReport(
      {R"({"kind": "ops", "compute": ["aten.mm.default x1"], "host": [], "first": "trial 1"})",
       R"({"kind": "ops", "compute": ["aten.mm.default x2"], "host": [], "first": "trial 1"})",
       R"({"kind": "ops", "compute": [], "host": [], "first": null})",
       R"({"kind": "tamper", "changed": ["anvil_py.tensor_io.write_dir"], "when": "after trial 0"})", seal_},
      false, dir_, true, out);
  EXPECT_EQ(out.aten_compute, std::vector<std::string>{"aten.mm.default x2"});  // Once, with its latest count.
  EXPECT_EQ(out.compute_seen_in, "trial 1");
  ASSERT_EQ(out.tampered.size(), 2u);
  EXPECT_EQ(out.tampered[1], "after trial 0");
  EXPECT_TRUE(out.forged.empty());
}

TEST_F(WorkerReportTest, LinesTheWorkerDoesNotWriteAreForgery) {
  RunOutcome out;
  JudgeWorkerReport({"not json", R"({"kind": "verdict", "status": "pass"})", seal_}, false, dir_, true, out);
  EXPECT_EQ(out.forged.size(), 2u);
  RunOutcome flooded;
  JudgeWorkerReport({seal_}, true, dir_, true, flooded);
  EXPECT_EQ(flooded.forged.size(), 1u);
}

}  // namespace
}  // namespace anvil
