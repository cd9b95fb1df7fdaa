#include "verify/feedback.h"

#include <gtest/gtest.h>

namespace anvil {
namespace {

bool Has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(FeedbackTest, CompileErrorCarriesTheSummary) {
  Verdict v;
  v.status = VerdictStatus::kCompileError;
  v.compile.compiler = "g++";
  v.compile.summary = "relu.py:14:9: error: 'foo' was not declared";
  std::string f = MakeFeedback(v);
  EXPECT_TRUE(Has(f, "Compilation failed (g++)"));
  EXPECT_TRUE(Has(f, "relu.py:14:9"));
}

TEST(FeedbackTest, WrongAnswerNamesIndexValuesAndTolerance) {
  Verdict v;
  v.status = VerdictStatus::kWrongAnswer;
  v.correct.trials = 5;
  v.correct.passed = 2;
  TrialCheck t;
  t.trial = 3;
  OutputCheck o;
  o.name = "out0";
  o.tolerance = {1e-4, 1e-4};
  o.result.ok = false;
  o.result.problem = "nan";
  o.result.elements = 100;
  o.result.mismatches = 7;
  o.result.nonfinite_mismatches = 7;
  o.result.first_mismatch = 12;
  o.result.first_mismatch_index = {1, 2};
  o.result.expected_at_first = 0.5;
  o.result.actual_at_first = 0.25;
  t.outputs.push_back(o);
  v.correct.details.push_back(t);
  std::string f = MakeFeedback(v);
  EXPECT_TRUE(Has(f, "2 of 5 trials")) << f;
  EXPECT_TRUE(Has(f, "Trial 3"));
  EXPECT_TRUE(Has(f, "7 of 100 elements"));
  EXPECT_TRUE(Has(f, "[1, 2]"));
  EXPECT_TRUE(Has(f, "expected 0.5, got 0.25"));
  EXPECT_TRUE(Has(f, "NaN"));
}

TEST(FeedbackTest, CheatListsOnlyVerdictChangingRules) {
  Verdict v;
  v.status = VerdictStatus::kCheat;
  v.legal.hits.push_back({"py.torch_compute", "cheat", 9, 4, "return torch.relu(x)", "torch.relu in forward", "c.py"});
  v.legal.hits.push_back({"py.stream", "evidence", 3, 1, "s = torch.cuda.Stream()", "stream", "c.py"});
  std::string f = MakeFeedback(v);
  EXPECT_TRUE(Has(f, "[py.torch_compute]"));
  EXPECT_TRUE(Has(f, "line 9"));
  EXPECT_FALSE(Has(f, "py.stream"));
  EXPECT_TRUE(Has(f, "torch/library calls may only allocate")) << f;
}

TEST(FeedbackTest, CheatAdviceFitsWhatWasCaught) {
  // Work finished after the call returned is not a torch call: the advice says where the work belongs.
  Verdict v;
  v.status = VerdictStatus::kCheat;
  v.legal.hits.push_back({"run.after_return", "cheat", 0, 0, "", "timed call 0 changed after it returned", ""});
  std::string f = MakeFeedback(v);
  EXPECT_TRUE(Has(f, "inside each forward call")) << f;
  EXPECT_FALSE(Has(f, "torch/library")) << f;
}

TEST(FeedbackTest, RuntimeErrorAndTimeoutSayWhatHappened) {
  Verdict v;
  v.status = VerdictStatus::kRuntimeError;
  v.run.term_signal = 11;
  v.run.stage = "forward";
  EXPECT_TRUE(Has(MakeFeedback(v), "signal 11"));
  v.status = VerdictStatus::kTimeout;
  v.run.deadline_seconds = 20;
  EXPECT_TRUE(Has(MakeFeedback(v), "within 20 s"));
}

}  // namespace
}  // namespace anvil
