#include "report/run_records.h"

#include <gtest/gtest.h>

#include "core/temp_dir_fixture.h"

namespace anvil {
namespace {

class RunRecordsTest : public TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    db_ = std::move(RunDb::Open(dir_ / "run.db", true)).value();
    RunInfo info;
    info.model = "m";
    info.prompt_id = "p";
    info.backend = "cpu";
    info.samples = 2;
    info.turns = 3;
    ASSERT_TRUE(db_->BeginRun(info).ok());
    TaskRow t;
    t.name = "19_ReLU";
    t.level = 1;
    t.problem = 19;
    t.sha256 = "aa";
    task_ = db_->AddTask(t).value();
  }
  // Records an attempt of (sample, turn) as done with `outcome` and `reward`.
  void Done(int64_t sample, int64_t turn, const std::string& outcome, std::optional<double> reward) {
    const int64_t attempt = db_->AddAttempt(db_->AddSample(task_, sample).value(), turn).value();
    RequestRecord q;
    q.messages_json = "[]";
    AnswerUpdate u;
    u.state = AttemptState::kDone;
    u.outcome = outcome;
    u.reward = reward;
    ASSERT_TRUE(db_->RecordAnswer(attempt, q, u).ok());
    if (outcome == "pass" || outcome == "wrong_answer") {
      VerdictUpdate v;
      v.outcome = outcome;
      v.reward = reward;
      v.verdict_json = R"({"correctness_rate": 1.0, "gates": {"perf": {"speedup_eager": 1.5}}})";
      ASSERT_TRUE(db_->RecordVerdict(attempt, v).ok());
    }
  }
  std::unique_ptr<RunDb> db_;
  int64_t task_ = 0;
};

TEST_F(RunRecordsTest, ATurnCountsTheBestAttemptSoFar) {
  Done(0, 1, "compile_error", -1.0);
  Done(0, 2, "pass", 1.25);
  Done(0, 3, "wrong_answer", -0.5);  // Worse than turn 2: turn 3 still counts the pass.
  Done(1, 1, "server_error", std::nullopt);
  ASSERT_TRUE(db_->AddAttempt(db_->AddSample(task_, 1).value(), 2).ok());  // Pending.
  auto turns = RecordsByTurn(*db_);
  ASSERT_TRUE(turns.ok()) << turns.message();
  ASSERT_EQ(turns.value().size(), 3u);
  const auto status = [&](int turn, int sample) { return turns.value()[turn - 1].records[sample].status; };
  EXPECT_EQ(status(1, 0), "compile_error");
  EXPECT_EQ(status(2, 0), "pass");
  EXPECT_EQ(status(3, 0), "pass");
  EXPECT_DOUBLE_EQ(turns.value()[2].records[0].speedup_eager, 1.5);
  EXPECT_EQ(status(1, 1), "server_error");
  EXPECT_EQ(turns.value()[0].server_errors, 1);
  EXPECT_EQ(status(3, 1), "server_error");  // Its later turn never finished.
  const SampleRecord& r = turns.value()[0].records[0];
  EXPECT_EQ(r.level, 1);
  EXPECT_EQ(r.problem, 19);
  EXPECT_NE(r.task.find("19_ReLU"), std::string::npos);
}

TEST_F(RunRecordsTest, TiesGoToTheEarlierTurnAndUnfinishedSamplesArePending) {
  Done(0, 1, "no_code", -1.0);
  Done(0, 2, "compile_error", -1.0);
  ASSERT_TRUE(db_->AddAttempt(db_->AddSample(task_, 1).value(), 1).ok());
  auto turns = RecordsByTurn(*db_).value();
  EXPECT_EQ(turns[1].records[0].status, "no_code");
  EXPECT_EQ(turns[0].records[1].status, "pending");
  EXPECT_EQ(turns[0].pending, 1);
}

}  // namespace
}  // namespace anvil
