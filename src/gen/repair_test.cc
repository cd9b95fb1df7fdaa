#include "gen/repair.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace anvil {
namespace {

AttemptRow Done(const std::string& outcome, const std::string& verdict_json = "") {
  AttemptRow a;
  a.state = AttemptState::kDone;
  a.outcome = outcome;
  if (!verdict_json.empty()) a.verdict_json = verdict_json;
  return a;
}

constexpr const char* kSlowPass = R"({"status": "pass", "feedback": "Correct.", "gates": {"perf": {
    "candidate": {"median_ms": 2.0}, "eager": {"median_ms": 2.1}, "compile": {"median_ms": 1.0},
    "speedup_eager": 1.05, "speedup_compile": 0.5, "floor_ms": 0.25}}})";

TEST(RepairTest, WhoGetsAnotherTurn) {
  RepairOptions o;
  for (const char* failed :
       {"compile_error", "runtime_error", "timeout", "wrong_answer", "cheat", "no_code", "truncated", "refused"}) {
    EXPECT_TRUE(NeedsAnotherTurn(Done(failed), o)) << failed;
  }
  EXPECT_FALSE(NeedsAnotherTurn(Done("pass", kSlowPass), o));
  EXPECT_FALSE(NeedsAnotherTurn(Done("server_error"), o));  // The machine's: a rerun asks that turn again.
  EXPECT_FALSE(NeedsAnotherTurn(Done("infra_error"), o));   // The machine's: a rerun judges it again.
  AttemptRow pending;
  EXPECT_FALSE(NeedsAnotherTurn(pending, o));
  o.optimize = true;
  EXPECT_TRUE(NeedsAnotherTurn(Done("pass", kSlowPass), o));  // 1.05x <= 1.1x.
  o.target_speedup = 1.0;
  EXPECT_FALSE(NeedsAnotherTurn(Done("pass", kSlowPass), o));
}

TEST(RepairTest, TheMessageCarriesTheFeedbackVerbatim) {
  const std::string feedback = "Wrong answer: 0 of 5 trials match the reference.\nTrial 0: out0 differs";
  const std::string verdict = nlohmann::json({{"status", "wrong_answer"}, {"feedback", feedback}}).dump();
  const std::string m = RepairMessage(Done("wrong_answer", verdict), {});
  EXPECT_NE(m.find(feedback), std::string::npos) << m;
  EXPECT_NE(m.find("fenced code block"), std::string::npos);
  EXPECT_NE(RepairMessage(Done("no_code"), {}).find("no code block"), std::string::npos);
  EXPECT_NE(RepairMessage(Done("truncated"), {}).find("cut off"), std::string::npos);
}

TEST(RepairTest, ASlowPassIsToldWhatWasMeasured) {
  RepairOptions o;
  o.optimize = true;
  const std::string m = RepairMessage(Done("pass", kSlowPass), o);
  EXPECT_NE(m.find("Correct."), std::string::npos) << m;
  EXPECT_NE(m.find("2.0000 ms"), std::string::npos) << m;
  EXPECT_NE(m.find("PyTorch eager takes 2.1000 ms"), std::string::npos) << m;
  EXPECT_NE(m.find("torch.compile takes 1.0000 ms"), std::string::npos) << m;
  EXPECT_NE(m.find("1.10x PyTorch eager"), std::string::npos) << m;
  EXPECT_NE(m.find("at least 0.2500 ms"), std::string::npos) << m;
}

}  // namespace
}  // namespace anvil
