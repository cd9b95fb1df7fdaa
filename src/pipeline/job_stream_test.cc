#include "pipeline/job_stream.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <set>
#include <thread>

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

TEST(JobStreamTest, AJobsOwnEvaluatorsJudgeIt) {
  Evaluator mine(Backend::FromName("cpu").value(), EvalOptions{});
  EvalOptions other_options;
  other_options.policy = PolicyNamed("kernelbench").value();
  Evaluator other(Backend::FromName("cpu").value(), other_options);
  JobStream stream({&mine}, BatchOptions{});
  std::mutex mu;
  std::map<std::string, std::string> policies;
  auto record = [&](const Job& job, Verdict v) {
    std::lock_guard<std::mutex> lock(mu);
    policies[job.candidate.filename().string()] = v.policy.name;
  };
  stream.Submit(Unjudgeable("/nowhere", 1), record);
  JobStream::Hooks hooks;
  hooks.evaluators = {&other};
  stream.Submit(Unjudgeable("/nowhere", 2), record, hooks);
  stream.Finish();
  EXPECT_EQ(policies["candidate1.txt"], "musacoder");
  EXPECT_EQ(policies["candidate2.txt"], "kernelbench");
}

TEST(JobStreamTest, AJobNoLongerWantedIsDroppedUnjudged) {
  Evaluator evaluator(Backend::FromName("cpu").value(), EvalOptions{});
  JobStream stream({&evaluator}, BatchOptions{});
  std::atomic<int> verdicts{0}, dropped{0};
  for (int n = 0; n < 4; ++n) {
    JobStream::Hooks hooks;
    hooks.wanted = [n] { return n % 2 == 0; };
    hooks.on_dropped = [&] { ++dropped; };
    stream.Submit(
        Unjudgeable("/nowhere", n), [&](const Job&, Verdict) { ++verdicts; }, hooks);
  }
  stream.Finish();
  EXPECT_EQ(verdicts, 2);
  EXPECT_EQ(dropped, 2);
}

TEST(JobStreamTest, InUseCountsQueuedAndEvaluatingJobs) {
  Evaluator evaluator(Backend::FromName("cpu").value(), EvalOptions{});
  BatchOptions options;
  options.parallel = 2;
  JobStream stream({&evaluator}, options);
  JobStream::Use idle = stream.InUse();
  EXPECT_EQ(idle.queued, 0u);
  EXPECT_EQ(idle.evaluating, 0);
  EXPECT_EQ(idle.run_slots, 2);  // Without lanes, each evaluation thread is a run slot.
  EXPECT_EQ(idle.compile_slots, 0);
  // A verdict callback that blocks holds its job as evaluating.
  std::mutex mu;
  std::condition_variable cv;
  bool release = false;
  std::atomic<int> inside{0};
  auto hold = [&](const Job&, Verdict) {
    ++inside;
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return release; });
  };
  for (int n = 0; n < 5; ++n) stream.Submit(Unjudgeable("/nowhere", n), hold);
  while (inside < 2) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  JobStream::Use busy = stream.InUse();
  EXPECT_EQ(busy.evaluating, 2);
  EXPECT_EQ(busy.runs, 2);
  EXPECT_EQ(busy.queued, 3u);
  {
    std::lock_guard<std::mutex> lock(mu);
    release = true;
  }
  cv.notify_all();
  stream.Finish();
  EXPECT_EQ(stream.InUse().evaluating, 0);
}

}  // namespace
}  // namespace anvil
