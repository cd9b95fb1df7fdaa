#include "run/worker_report.h"

#include <gtest/gtest.h>

#include <string>

#include "core/temp_dir_fixture.h"

namespace anvil {
namespace {

// The kernel trace as the worker writes it, and the line it sends for it: the file's digest.
class WorkerReportTest : public TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    Write("kernel_trace.tsv", "trace line\n");
  }
  const std::string seal_ = R"({"kind": "file", "file": "kernel_trace.tsv", )"
                            R"("sha256": "4cfc6698d08f57eceed8a7bdd090c549e00a0cace35abd9b4ad7ae366713bd28"})";
};

TEST_F(WorkerReportTest, FilesAsTheWorkerSealedThemPass) {
  RunOutcome out;
  JudgeWorkerReport({seal_}, false, dir_, true, out);
  EXPECT_TRUE(out.forged.empty()) << out.forged[0];
}

TEST_F(WorkerReportTest, ATraceRewrittenAfterItsSealIsForged) {
  // The candidate's code rewrites the kernel trace the worker wrote (catalog D5: evidence made up later).
  Write("kernel_trace.tsv", "another trace\n");
  RunOutcome out;
  JudgeWorkerReport({seal_}, false, dir_, true, out);
  ASSERT_EQ(out.forged.size(), 1u);
  EXPECT_NE(out.forged[0].find("kernel_trace.tsv: not what the worker wrote"), std::string::npos) << out.forged[0];
}

TEST_F(WorkerReportTest, ATraceTheWorkerNeverSealedIsForgedOnceItRanToItsEnd) {
  RunOutcome out;
  JudgeWorkerReport({}, false, dir_, true, out);
  ASSERT_EQ(out.forged.size(), 1u);
  EXPECT_EQ(out.forged[0], "kernel_trace.tsv: not written by the worker");
  // A worker that died (a crash, a deadline) may have written a trace it never got to seal.
  RunOutcome killed;
  JudgeWorkerReport({}, false, dir_, false, killed);
  EXPECT_TRUE(killed.forged.empty());
}

TEST_F(WorkerReportTest, OutputsInTheFolderAreNeitherReadNorSealed) {
  // Outputs reach the task server's buffers only: a folder of them a candidate writes is read by nothing, and a
  // seal of one (the worker's old message) is a line the worker does not write.
  Write("trial_0/tensors.json", R"({"version": 1, "tensors": []})");
  RunOutcome out;
  JudgeWorkerReport({seal_}, false, dir_, true, out);
  EXPECT_TRUE(out.forged.empty()) << out.forged[0];
  JudgeWorkerReport({seal_, R"({"kind": "seal", "dir": "trial_0", "tensors": []})"}, false, dir_, true, out);
  ASSERT_EQ(out.forged.size(), 1u);
  EXPECT_EQ(out.forged[0], "the report channel: a message of kind 'seal'");
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
