#include "pipeline/job_stream.h"

#include <gtest/gtest.h>

#include <atomic>
#include <set>

#include "core/temp_dir_fixture.h"

namespace anvil {
namespace {

namespace fs = std::filesystem;

// Candidates whose format cannot be told end at once in infra_error: the
// stream's own behaviour is what these tests see.
Job Unjudgeable(const fs::path& dir, int n) {
  Job job;
  job.task.name = "relu";
  job.candidate = dir / ("candidate" + std::to_string(n) + ".txt");
  return job;
}

TEST(JobStreamTest, JobsSubmittedFromVerdictsAreJudgedBeforeFinishReturns) {
  Evaluator evaluator(Backend::FromName("cpu").value(), EvalOptions{});
  BatchOptions options;
  options.parallel = 3;
  JobStream stream({&evaluator}, options);
  std::mutex mu;
  std::set<std::string> judged;
  std::function<void(const Job&, Verdict)> chain = [&](const Job& job, Verdict v) {
    EXPECT_EQ(v.status, VerdictStatus::kInfraError);
    EXPECT_NE(v.error.find(job.candidate.filename().string()), std::string::npos) << v.error;
    std::lock_guard<std::mutex> lock(mu);
    judged.insert(job.candidate.filename().string());
    const int n = std::stoi(job.candidate.stem().string().substr(9));
    if (n < 40) stream.Submit(Unjudgeable("/nowhere", n + 10), chain);  // A next turn, from the verdict.
  };
  for (int n = 0; n < 10; ++n) stream.Submit(Unjudgeable("/nowhere", n), chain);
  stream.Finish();
  EXPECT_EQ(judged.size(), 50u);
  EXPECT_TRUE(judged.count("candidate49.txt"));
}

TEST(JobStreamTest, AStreamWithNothingSubmittedFinishes) {
  Evaluator evaluator(Backend::FromName("cpu").value(), EvalOptions{});
  BatchOptions options;
  options.parallel = 2;
  options.compile_ahead = 2;
  JobStream stream({&evaluator}, options);
  stream.Finish();
  stream.Finish();  // Twice is harmless (the destructor finishes too).
}

}  // namespace
}  // namespace anvil
