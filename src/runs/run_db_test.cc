#include "runs/run_db.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <thread>

#include "core/temp_dir_fixture.h"
#include "runs/run_schema.h"
#include "runs/sqlite.h"

namespace anvil {
namespace {

namespace fs = std::filesystem;

class RunDbTest : public TempDirTest {
 protected:
  std::unique_ptr<RunDb> Make() {
    auto db = RunDb::Open(dir_ / "run.db", /*create=*/true);
    EXPECT_TRUE(db.ok()) << db.message();
    return std::move(db).value();
  }
  static RunInfo Info() {
    RunInfo info;
    info.model = "m";
    info.endpoint = "http://h/v1";
    info.prompt_id = "kernelbench-one-shot";
    info.backend = "cpu";
    info.samples = 2;
    info.turns = 1;
    info.sampling_json = R"({"temperature": 0.7})";
    return info;
  }
  static TaskRow Task(const std::string& name, const std::string& sha) {
    TaskRow t;
    t.name = name;
    t.level = 1;
    t.problem = 19;
    t.path = "/k/level1/" + name + ".py";
    t.sha256 = sha;
    t.source = "class Model: ...";
    return t;
  }
};

TEST_F(RunDbTest, ARunIsRecordedOnceAndARerunMustMatchIt) {
  auto db = Make();
  auto first = db->BeginRun(Info());
  ASSERT_TRUE(first.ok()) << first.message();
  EXPECT_EQ(first.value().anvil_version, ANVIL_VERSION);
  EXPECT_GT(first.value().created_at, 0);
  // Same settings in another spelling of the same JSON, more samples and turns: extended.
  RunInfo more = Info();
  more.sampling_json = R"({ "temperature":0.7 })";
  more.samples = 4;
  more.turns = 3;
  auto extended = db->BeginRun(more);
  ASSERT_TRUE(extended.ok()) << extended.message();
  EXPECT_EQ(extended.value().samples, 4);
  EXPECT_EQ(extended.value().turns, 3);
  EXPECT_EQ(extended.value().created_at, first.value().created_at);
  // Fewer later: the run keeps what it had.
  EXPECT_EQ(db->BeginRun(Info()).value().samples, 4);
  RunInfo other = Info();
  other.model = "other-model";
  other.sampling_json = R"({"temperature": 1.0})";
  auto refused = db->BeginRun(other);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("model: the run has 'm', asked 'other-model'"), std::string::npos)
      << refused.message();
  EXPECT_NE(refused.message().find("sampling"), std::string::npos) << refused.message();
  EXPECT_EQ(refused.message().find("backend"), std::string::npos) << refused.message();
}

TEST_F(RunDbTest, TasksAreKeyedByIdentityAndAttemptsBySampleAndTurn) {
  auto db = Make();
  ASSERT_TRUE(db->BeginRun(Info()).ok());
  const int64_t a = db->AddTask(Task("19_ReLU", "aa")).value();
  EXPECT_EQ(db->AddTask(Task("19_ReLU", "aa")).value(), a);
  const int64_t changed = db->AddTask(Task("19_ReLU", "bb")).value();  // Same name, other content.
  EXPECT_NE(changed, a);
  TaskRow unnumbered = Task("my_op", "cc");
  unnumbered.problem.reset();
  ASSERT_TRUE(db->AddTask(unnumbered).ok());
  auto tasks = db->Tasks().value();
  ASSERT_EQ(tasks.size(), 3u);
  EXPECT_FALSE(tasks[2].problem.has_value());
  const int64_t s0 = db->AddSample(a, 0).value();
  EXPECT_EQ(db->AddSample(a, 0).value(), s0);
  const int64_t t1 = db->AddAttempt(s0, 1).value();
  EXPECT_EQ(db->AddAttempt(s0, 1).value(), t1);
  ASSERT_TRUE(db->AddAttempt(s0, 2).ok());
  auto attempts = db->Attempts().value();
  ASSERT_EQ(attempts.size(), 2u);
  EXPECT_EQ(attempts[0].turn, 1);
  EXPECT_EQ(attempts[0].task_id, a);
  EXPECT_EQ(attempts[0].state, AttemptState::kPending);
}

TEST_F(RunDbTest, AnswersAndVerdictsLandWithTheirAttempt) {
  auto db = Make();
  ASSERT_TRUE(db->BeginRun(Info()).ok());
  const int64_t task = db->AddTask(Task("19_ReLU", "aa")).value();
  const int64_t s0 = db->AddSample(task, 0).value();
  const int64_t s1 = db->AddSample(task, 1).value();
  const int64_t good = db->AddAttempt(s0, 1).value();
  const int64_t bad = db->AddAttempt(s1, 1).value();
  RequestRecord q;
  q.messages_json = R"([{"role":"user","content":"write"}])";
  q.response = R"({"choices": []})";
  q.http_status = 200;
  q.finish_reason = "stop";
  q.prompt_tokens = 10;
  q.completion_tokens = 20;
  AnswerUpdate code;
  code.code = "class ModelNew: ...";
  code.format = "kernelbench";
  ASSERT_TRUE(db->RecordAnswer(good, q, code).ok());
  AnswerUpdate none;
  none.state = AttemptState::kDone;
  none.outcome = "no_code";
  none.reward = -1.0;
  ASSERT_TRUE(db->RecordAnswer(bad, q, none).ok());
  VerdictUpdate v;
  v.outcome = "pass";
  v.verdict_json = R"({"status": "pass"})";
  v.reward = 1.2;
  v.stage_seconds = {{"generate", 1.5}, {"compile", 0.25}};
  ASSERT_TRUE(db->RecordVerdict(good, v).ok());
  auto attempts = db->Attempts().value();
  ASSERT_EQ(attempts.size(), 2u);
  EXPECT_EQ(attempts[0].state, AttemptState::kDone);
  EXPECT_EQ(attempts[0].outcome, "pass");
  EXPECT_EQ(attempts[0].code, "class ModelNew: ...");
  EXPECT_DOUBLE_EQ(attempts[0].reward.value(), 1.2);
  EXPECT_EQ(attempts[1].outcome, "no_code");
  EXPECT_DOUBLE_EQ(attempts[1].reward.value(), -1.0);
  const auto times = db->StageTimes().value();
  ASSERT_EQ(times.size(), 1u);
  EXPECT_EQ(times.at(good), (std::map<std::string, double>{{"generate", 1.5}, {"compile", 0.25}}));
  // An answer for an attempt that does not exist rolls back whole: no request without its attempt.
  EXPECT_FALSE(db->RecordAnswer(9999, q, code).ok());
}

// A version-1 file (before request.choice) is read as it is, and moved to
// the current version when opened for writing; its requests answered choice 0.
TEST_F(RunDbTest, AVersionOneRunIsReadAsItIsAndMovedOnForWriting) {
  {
    auto raw = Sqlite::Open(dir_ / "run.db", /*create=*/true, /*read_only=*/false);
    ASSERT_TRUE(raw.ok()) << raw.message();
    ASSERT_TRUE(raw.value()->Exec(std::string(kRunSchemaV1) + "\nPRAGMA user_version = 1;").ok());
    ASSERT_TRUE(raw.value()
                    ->Exec("INSERT INTO run VALUES (1, 1.0, 'v', 'm', 'e', 'p', 1, 'cpu', 1, 1, '{}', '{}');"
                           "INSERT INTO task VALUES (1, 't', 1, 1, '/t.py', 'aa', 'src');"
                           "INSERT INTO sample VALUES (1, 1, 0);"
                           "INSERT INTO attempt VALUES (1, 1, 1, 'done', 'no_code', NULL, NULL, NULL, -1, 0, 1, 2);"
                           "INSERT INTO request VALUES (1, 1, '[]', '{\"choices\": []}', 200, 'none', '', 'stop', "
                           "NULL, NULL, NULL, 1, 0.5, NULL, NULL, 1.5);")
                    .ok());
  }
  {
    auto read = RunDb::Open(dir_ / "run.db", /*create=*/false, /*read_only=*/true);
    ASSERT_TRUE(read.ok()) << read.message();
    auto answered = read.value()->LastAnswered(1);
    ASSERT_TRUE(answered.ok()) << answered.message();
    ASSERT_TRUE(answered.value().has_value());
    EXPECT_EQ(answered.value()->choice, 0);
    auto attempts = read.value()->Attempts();  // No sample.prime_echo: none.
    ASSERT_TRUE(attempts.ok()) << attempts.message();
    ASSERT_EQ(attempts.value().size(), 1u);
    EXPECT_FALSE(attempts.value()[0].prime_echo.has_value());
  }
  auto db = RunDb::Open(dir_ / "run.db", /*create=*/false);
  ASSERT_TRUE(db.ok()) << db.message();
  EXPECT_EQ(Sqlite::Open(dir_ / "run.db", false, true).value()->UserVersion().value(), kRunDbVersion);
  RequestRecord q;
  q.messages_json = "[]";
  q.response = R"({"choices": []})";
  q.http_status = 200;
  q.choice = 3;
  AnswerUpdate none;
  none.state = AttemptState::kDone;
  none.outcome = "no_code";
  ASSERT_TRUE(db.value()->RecordAnswer(1, q, none).ok());
  EXPECT_EQ(db.value()->LastAnswered(1).value()->choice, 3);
  ASSERT_TRUE(db.value()->RecordPrimeEcho(1, -1.0).ok());  // Version 3's column, added on the way.
  EXPECT_EQ(db.value()->Attempts().value()[0].prime_echo, -1.0);
}

TEST_F(RunDbTest, ASamplesTurnRewardsAndItsPrimeEchoScore) {
  auto db = Make();
  ASSERT_TRUE(db->BeginRun(Info()).ok());
  const int64_t sample = db->AddSample(db->AddTask(Task("19_ReLU", "aa")).value(), 0).value();
  RequestRecord q;
  q.messages_json = "[]";
  AnswerUpdate no_code;
  no_code.state = AttemptState::kDone;
  no_code.outcome = "no_code";
  no_code.reward = -1.0;
  ASSERT_TRUE(db->RecordAnswer(db->AddAttempt(sample, 1).value(), q, no_code).ok());
  const int64_t second = db->AddAttempt(sample, 2).value();
  AnswerUpdate code;
  code.code = "x";
  code.format = "native";
  ASSERT_TRUE(db->RecordAnswer(second, q, code).ok());
  EXPECT_EQ(db->TurnRewards(sample).value(), (std::vector<std::optional<double>>{-1.0}));  // Turn 2 not judged yet.
  VerdictUpdate infra;
  infra.outcome = "infra_error";
  infra.verdict_json = "{}";
  ASSERT_TRUE(db->RecordVerdict(second, infra).ok());
  EXPECT_EQ(db->TurnRewards(sample).value(), (std::vector<std::optional<double>>{-1.0, std::nullopt}));
  EXPECT_FALSE(db->Attempts().value()[0].prime_echo.has_value());
  ASSERT_TRUE(db->RecordPrimeEcho(sample, 0.25).ok());
  for (const AttemptRow& a : db->Attempts().value()) EXPECT_EQ(a.prime_echo, 0.25);
  ASSERT_TRUE(db->RecordPrimeEcho(sample, std::nullopt).ok());
  EXPECT_FALSE(db->Attempts().value()[1].prime_echo.has_value());
}

TEST_F(RunDbTest, TheMachinesFailuresAreReopenedOnARerun) {
  auto db = Make();
  ASSERT_TRUE(db->BeginRun(Info()).ok());
  const int64_t task = db->AddTask(Task("19_ReLU", "aa")).value();
  const int64_t server = db->AddAttempt(db->AddSample(task, 0).value(), 1).value();
  const int64_t infra = db->AddAttempt(db->AddSample(task, 1).value(), 1).value();
  RequestRecord failed;
  failed.messages_json = "[]";
  failed.failure = "unreachable";
  AnswerUpdate server_error;
  server_error.state = AttemptState::kDone;
  server_error.outcome = "server_error";
  ASSERT_TRUE(db->RecordAnswer(server, failed, server_error).ok());
  RequestRecord ok;
  ok.messages_json = "[]";
  AnswerUpdate code;
  code.code = "x";
  code.format = "native";
  ASSERT_TRUE(db->RecordAnswer(infra, ok, code).ok());
  VerdictUpdate v;
  v.outcome = "infra_error";
  v.verdict_json = "{}";
  ASSERT_TRUE(db->RecordVerdict(infra, v).ok());
  EXPECT_EQ(db->ReopenMachineFailures().value(), 2);
  auto attempts = db->Attempts().value();
  EXPECT_EQ(attempts[0].state, AttemptState::kPending);
  EXPECT_EQ(attempts[1].state, AttemptState::kGenerated);
  EXPECT_EQ(attempts[1].code, "x");
  EXPECT_FALSE(attempts[1].outcome.has_value());
  EXPECT_EQ(db->ReopenMachineFailures().value(), 0);
}

TEST_F(RunDbTest, ReopensWhatItWroteAndRefusesWhatItDidNot) {
  {
    auto db = Make();
    ASSERT_TRUE(db->BeginRun(Info()).ok());
    ASSERT_TRUE(db->AddTask(Task("19_ReLU", "aa")).ok());
    ASSERT_TRUE(db->Checkpoint().ok());
  }
  auto again = RunDb::Open(dir_ / "run.db", /*create=*/false, /*read_only=*/true);
  ASSERT_TRUE(again.ok()) << again.message();
  EXPECT_EQ(again.value()->Info().value().model, "m");
  EXPECT_EQ(again.value()->Tasks().value().size(), 1u);
  EXPECT_FALSE(RunDb::Open(dir_ / "missing.db", false).ok());
  Write("text.db", "not a database at all, but long enough to be read as one............................");
  auto text = RunDb::Open(dir_ / "text.db", false);
  ASSERT_FALSE(text.ok());
  EXPECT_NE(text.message().find("not a run database"), std::string::npos) << text.message();
}

TEST_F(RunDbTest, ManyThreadsRecordAtOnce) {
  auto db = Make();
  ASSERT_TRUE(db->BeginRun(Info()).ok());
  const int64_t task = db->AddTask(Task("19_ReLU", "aa")).value();
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] {
      const int64_t attempt = db->AddAttempt(db->AddSample(task, i).value(), 1).value();
      RequestRecord q;
      q.messages_json = "[]";
      AnswerUpdate u;
      u.code = "c";
      u.format = "native";
      EXPECT_TRUE(db->RecordAnswer(attempt, q, u).ok());
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(db->Attempts().value().size(), 8u);
}

}  // namespace
}  // namespace anvil
