#include "gen/generate.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <nlohmann/json.hpp>

#include "core/temp_dir_fixture.h"

namespace anvil {
namespace {

// A model behind the interface: answers from a script, one per call, the last repeated.
class FakeModel : public ModelClient {
 public:
  explicit FakeModel(std::vector<ModelCall> script) : script_(std::move(script)) {}
  ModelCall Complete(const ChatRequest& request) override {
    std::lock_guard<std::mutex> lock(mu_);
    last_request_ = request;
    requests_.push_back(request);
    return script_[std::min(calls_++, script_.size() - 1)];
  }
  std::size_t calls() {
    std::lock_guard<std::mutex> lock(mu_);
    return calls_;
  }
  ChatRequest last_request_;
  std::vector<ChatRequest> requests_;

 private:
  std::mutex mu_;
  std::vector<ModelCall> script_;
  std::size_t calls_ = 0;
};

ModelCall Answer(const std::string& content, const std::string& finish = "stop", int64_t tokens = 10) {
  ModelCall call;
  call.http_status = 200;
  call.body = nlohmann::json({{"choices", {{{"message", {{"content", content}}}, {"finish_reason", finish}}}}}).dump();
  call.attempts = 1;
  call.seconds = 0.01;
  ChatResponse r;
  ChatChoice c;
  c.content = content;
  c.finish_reason = finish;
  r.choices.push_back(c);
  r.usage = TokenUsage{5, tokens, std::nullopt};
  call.response = r;
  return call;
}

ModelCall Failure(ModelFailure failure, const std::string& message) {
  ModelCall call;
  call.failure = failure;
  call.message = message;
  call.http_status = failure == ModelFailure::kHttpError ? 500 : 0;
  call.attempts = 3;
  return call;
}

class GenerateTest : public TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    db_ = std::move(RunDb::Open(dir_ / "run.db", true)).value();
    RunInfo info;
    info.model = "m";
    info.prompt_id = kDefaultPromptId;
    info.backend = "cpu";
    ASSERT_TRUE(db_->BeginRun(info).ok());
    prompt_ = LoadPrompt(kDefaultPromptId).value();
    for (const char* name : {"1_Add", "2_Relu"}) {
      Task t;
      t.name = name;
      t.path = dir_ / (std::string(name) + ".py");
      t.source = "class Model: pass  # " + std::string(name);
      t.sha256 = std::string(64, name[0]);
      t.level = 1;
      tasks_.push_back(t);
    }
  }
  GenerateOptions Options(int samples, int concurrency) {
    GenerateOptions o;
    o.request.model = "m";
    o.samples = samples;
    o.concurrency = concurrency;
    o.candidates_dir = dir_ / "candidates";
    return o;
  }
  std::map<std::string, int> Outcomes() {
    std::map<std::string, int> by;
    for (const AttemptRow& a : db_->Attempts().value()) {
      ++by[a.state == AttemptState::kDone ? a.outcome.value_or("?") : AttemptStateName(a.state)];
    }
    return by;
  }
  std::unique_ptr<RunDb> db_;
  PromptTemplate prompt_;
  std::vector<Task> tasks_;
};

TEST_F(GenerateTest, EveryAnswerEndsInOneOutcome) {
  ChatChoice refusal;
  FakeModel model({Answer("Shared memory would help."), Answer("```python\nclass ModelNew:\n", "length"),
                   Failure(ModelFailure::kHttpError, "h answered HTTP 500"), Answer("", "content_filter")});
  Generator g(*db_, model, prompt_, {}, Options(2, 4));
  auto summary = g.Run(tasks_, nullptr);
  ASSERT_TRUE(summary.ok()) << summary.message();
  EXPECT_EQ(summary.value().asked, 4);
  EXPECT_EQ(summary.value().answered, 3);
  EXPECT_FALSE(summary.value().stopped);
  EXPECT_EQ(Outcomes(),
            (std::map<std::string, int>{{"no_code", 1}, {"truncated", 1}, {"server_error", 1}, {"refused", 1}}));
  for (const AttemptRow& a : db_->Attempts().value()) {
    if (a.outcome == "server_error") {
      EXPECT_FALSE(a.reward.has_value());
    } else {
      EXPECT_EQ(a.reward, -1.0);
    }
  }
  // The prompt is the task's: its source is in the user message.
  EXPECT_NE(model.last_request_.messages.back().content.find("class Model: pass"), std::string::npos);
}

TEST_F(GenerateTest, AnUnreachableServerStopsTheRunAndARerunGoesOn) {
  FakeModel down({Failure(ModelFailure::kUnreachable, "cannot reach http://h/v1 for 60 s")});
  auto stopped = Generator(*db_, down, prompt_, {}, Options(2, 1)).Run(tasks_, nullptr);
  ASSERT_TRUE(stopped.ok()) << stopped.message();
  EXPECT_TRUE(stopped.value().stopped);
  EXPECT_NE(stopped.value().stop_reason.find("cannot reach http://h/v1"), std::string::npos);
  EXPECT_EQ(down.calls(), 1u);
  EXPECT_EQ(Outcomes(), (std::map<std::string, int>{{"server_error", 1}, {"pending", 3}}));
  FakeModel up({Answer("no code here")});
  auto resumed = Generator(*db_, up, prompt_, {}, Options(2, 2)).Run(tasks_, nullptr);
  ASSERT_TRUE(resumed.ok()) << resumed.message();
  EXPECT_EQ(resumed.value().reopened, 1);
  EXPECT_EQ(resumed.value().asked, 4);
  EXPECT_EQ(Outcomes(), (std::map<std::string, int>{{"no_code", 4}}));
  // Nothing left to ask: a third run sends nothing.
  FakeModel idle({Answer("x")});
  ASSERT_TRUE(Generator(*db_, idle, prompt_, {}, Options(2, 2)).Run(tasks_, nullptr).ok());
  EXPECT_EQ(idle.calls(), 0u);
}

TEST_F(GenerateTest, TheTokenBudgetStopsNewRequests) {
  FakeModel model({Answer("no code", "stop", 100)});
  GenerateOptions o = Options(3, 1);
  o.max_total_tokens = 250;
  auto summary = Generator(*db_, model, prompt_, {}, o).Run(tasks_, nullptr);
  ASSERT_TRUE(summary.ok());
  EXPECT_TRUE(summary.value().stopped);
  EXPECT_EQ(summary.value().asked, 3);
  EXPECT_EQ(summary.value().completion_tokens, 300);
  EXPECT_NE(summary.value().stop_reason.find("--max-total-tokens"), std::string::npos);
}

TEST_F(GenerateTest, ASampleThatHasNotPassedIsAskedAgainWithItsHistory) {
  for (const std::string history : {"full", "last"}) {
    auto db = std::move(RunDb::Open(dir_ / (history + ".db"), true)).value();
    RunInfo info;
    info.model = "m";
    info.prompt_id = kDefaultPromptId;
    info.backend = "cpu";
    ASSERT_TRUE(db->BeginRun(info).ok());
    FakeModel model({Answer("Use shared memory.")});
    GenerateOptions o = Options(1, 1);
    o.turns = 3;
    o.history = history;
    auto summary = Generator(*db, model, prompt_, {}, o).Run({tasks_[0]}, nullptr);
    ASSERT_TRUE(summary.ok()) << summary.message();
    EXPECT_EQ(summary.value().asked, 3);
    auto attempts = db->Attempts().value();
    ASSERT_EQ(attempts.size(), 3u);
    EXPECT_EQ(attempts[2].turn, 3);
    const std::vector<ChatMessage>& last = model.requests_.back().messages;
    ASSERT_EQ(last.size(), history == "full" ? 6u : 4u) << history;
    EXPECT_EQ(last[last.size() - 2].role, "assistant");
    EXPECT_EQ(last[last.size() - 2].content, "Use shared memory.");
    EXPECT_EQ(last.back().role, "user");
    EXPECT_NE(last.back().content.find("no code block"), std::string::npos) << last.back().content;
  }
}

TEST_F(GenerateTest, AServerErrorEndsTheSamplesTurnsUntilARerun) {
  FakeModel model({Failure(ModelFailure::kHttpError, "h answered HTTP 500")});
  GenerateOptions o = Options(1, 1);
  o.turns = 3;
  ASSERT_TRUE(Generator(*db_, model, prompt_, {}, o).Run({tasks_[0]}, nullptr).ok());
  EXPECT_EQ(db_->Attempts().value().size(), 1u);  // No turn 2 after the machine's failure.
}

// Several first-turn samples of a task in one request (n): each choice is
// its own sample's answer; a server that gives fewer choices than asked
// leaves the others to a rerun (server_error).
TEST_F(GenerateTest, OneRequestAnswersSeveralSamples) {
  ModelCall three = Answer("No code, first.");
  for (const char* text : {"No code, second.", "```python\nclass ModelNew:\n"}) {
    ChatChoice c;
    c.content = text;
    c.finish_reason = "stop";
    three.response->choices.push_back(c);
  }
  three.response->choices.back().finish_reason = "length";
  FakeModel model({three});
  GenerateOptions o = Options(5, 1);
  o.n_per_request = 3;
  auto summary = Generator(*db_, model, prompt_, {}, o).Run({tasks_[0]}, nullptr);
  ASSERT_TRUE(summary.ok()) << summary.message();
  ASSERT_EQ(model.requests_.size(), 2u);  // 3 + 2.
  EXPECT_EQ(model.requests_[0].sampling.n, 3);
  EXPECT_EQ(model.requests_[1].sampling.n, 2);
  EXPECT_EQ(summary.value().asked, 2);
  EXPECT_EQ(summary.value().answered, 5);
  EXPECT_EQ(summary.value().completion_tokens, 20);  // The request's usage, counted once per request.
  EXPECT_EQ(Outcomes(), (std::map<std::string, int>{{"no_code", 4}, {"truncated", 1}}));
  auto last = db_->LastAnswered(db_->Attempts().value()[1].id).value();
  ASSERT_TRUE(last.has_value());
  EXPECT_EQ(last->choice, 1);

  FakeModel ignores_n({Answer("No code, only one choice.")});
  auto db = std::move(RunDb::Open(dir_ / "n.db", true)).value();
  RunInfo info;
  info.model = "m";
  info.prompt_id = kDefaultPromptId;
  info.backend = "cpu";
  ASSERT_TRUE(db->BeginRun(info).ok());
  ASSERT_TRUE(Generator(*db, ignores_n, prompt_, {}, o).Run({tasks_[0]}, nullptr).ok());
  std::map<std::string, int> by;
  for (const AttemptRow& a : db->Attempts().value()) ++by[a.outcome.value_or("?")];
  EXPECT_EQ(by, (std::map<std::string, int>{{"no_code", 2}, {"server_error", 3}}));
}

// A sample's repair turn is asked while another sample's first answer is
// still coming: no sample waits for a whole turn.
TEST_F(GenerateTest, TurnsOverlapAcrossSamples) {
  class Gated : public ModelClient {
   public:
    ModelCall Complete(const ChatRequest& request) override {
      bool add = false;  // A request about 1_Add (its source is in the prompt).
      for (const ChatMessage& m : request.messages) add = add || m.content.find("# 1_Add") != std::string::npos;
      std::unique_lock<std::mutex> lock(mu_);
      if (add && request.messages.size() == 2) {
        waited_ = cv_.wait_for(lock, std::chrono::seconds(20), [&] { return repair_seen_; });
      } else if (!add && request.messages.size() > 2) {
        repair_seen_ = true;
        cv_.notify_all();
      }
      return Answer("No code this time.");
    }
    std::mutex mu_;
    std::condition_variable cv_;
    bool repair_seen_ = false, waited_ = false;
  } model;
  GenerateOptions o = Options(1, 2);
  o.turns = 2;
  auto summary = Generator(*db_, model, prompt_, {}, o).Run(tasks_, nullptr);
  ASSERT_TRUE(summary.ok()) << summary.message();
  EXPECT_TRUE(model.waited_) << "2_Relu's second turn was not asked before 1_Add's first answer";
  EXPECT_EQ(summary.value().asked, 4);
  EXPECT_EQ(Outcomes(), (std::map<std::string, int>{{"no_code", 4}}));
}

// A run stopped between turns plans the next turn on its rerun, and a rerun
// with more turns extends every sample that did not pass.
TEST_F(GenerateTest, ARerunPlansTheTurnsThatAreMissing) {
  FakeModel model({Answer("No code.")});
  ASSERT_TRUE(Generator(*db_, model, prompt_, {}, Options(1, 2)).Run(tasks_, nullptr).ok());
  EXPECT_EQ(db_->Attempts().value().size(), 2u);
  GenerateOptions o = Options(1, 2);
  o.turns = 3;
  auto more = Generator(*db_, model, prompt_, {}, o).Run(tasks_, nullptr);
  ASSERT_TRUE(more.ok()) << more.message();
  EXPECT_EQ(more.value().asked, 4);
  EXPECT_EQ(db_->Attempts().value().size(), 6u);
  EXPECT_EQ(model.requests_.back().messages.size(), 6u);  // Turn 3 holds turns 1 and 2.
}

TEST(ProblemNumberTest, IsTheFileNamesNumericPrefix) {
  EXPECT_EQ(ProblemNumber("19_ReLU"), 19);
  EXPECT_EQ(ProblemNumber("100_HingeLoss"), 100);
  EXPECT_EQ(ProblemNumber("7"), 7);
  EXPECT_EQ(ProblemNumber("relu"), std::nullopt);
  EXPECT_EQ(ProblemNumber("3d_conv"), std::nullopt);
}

}  // namespace
}  // namespace anvil
