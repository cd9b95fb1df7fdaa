#include "rl/score.h"

#include <gtest/gtest.h>

namespace anvil {
namespace {

using nlohmann::json;

std::optional<double> Reward(const std::string& text, RewardOptions options = {}) {
  auto r = RewardOfJson(json::parse(text), options);
  EXPECT_TRUE(r.ok()) << r.message();
  return r.ok() ? r.value() : std::nullopt;
}

TEST(ScoreTest, RewardsOfVerdictsAttemptsAndModelOutcomes) {
  EXPECT_DOUBLE_EQ(*Reward(R"({"status": "pass", "gates": {"perf": {"speedup_eager": 3}}})"), 2.0);
  EXPECT_DOUBLE_EQ(*Reward(R"({"status": "pass", "gates": {"perf": {"speedup_eager": 3, "speedup_compile": 1.5}}})",
                           {0.5, 4.0, true}),
                   1.25);
  EXPECT_DOUBLE_EQ(*Reward(R"({"status": "pass", "gates": []})"), 1.0);  // perf unknown: nu = 1
  EXPECT_DOUBLE_EQ(*Reward(R"({"status": "wrong_answer", "correctness_rate": 0.6})"), -0.2);
  EXPECT_DOUBLE_EQ(*Reward(R"({"status": "wrong_answer"})"), -1.0);
  EXPECT_DOUBLE_EQ(*Reward(R"({"status": "cheat", "correctness_rate": 1})"), -1.0);
  EXPECT_DOUBLE_EQ(*Reward(R"({"outcome": "no_code", "verdict": null})"), -1.0);
  EXPECT_DOUBLE_EQ(*Reward(R"({"outcome": "pass", "verdict": {"gates": {"perf": {"speedup_eager": 2}}}})"), 1.5);
  EXPECT_FALSE(Reward(R"({"status": "infra_error"})"));
  EXPECT_FALSE(Reward(R"({"outcome": "server_error"})"));
}

TEST(ScoreTest, WhatIsNotAVerdictIsAnError) {
  for (const char* bad : {R"({"status": "passed"})", R"({"score": 1})", R"("pass")", R"({"status": 3})"}) {
    EXPECT_FALSE(RewardOfJson(json::parse(bad), {}).ok()) << bad;
  }
  EXPECT_NE(RewardOfJson(json::parse(R"({"status": "passed"})"), {}).message().find("unknown verdict status"),
            std::string::npos);
}

TEST(ScoreTest, LinesAreVerdictsOrTrajectories) {
  const PrimeEchoOptions bonuses{0.75, 0.2, 0.1};
  auto one = ScoreLine(json::parse(R"({"id": 7, "status": "timeout"})"), {}, std::nullopt);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one.value(), json::parse(R"({"id": 7, "reward": -1.0})"));
  auto traj =
      ScoreLine(json::parse(R"({"id": "a", "turns": [{"outcome": "no_code"}, {"status": "pass"}]})"), {}, bonuses);
  ASSERT_TRUE(traj.ok()) << traj.message();
  EXPECT_EQ(traj.value()["turn_rewards"], json::parse("[-1.0, 1.0]"));
  EXPECT_DOUBLE_EQ(traj.value()["prime_echo"].get<double>(), -0.75 + 0.25 + 0.1);
  auto infra = ScoreLine(json::parse(R"([{"status": "infra_error"}])"), {}, bonuses);
  ASSERT_TRUE(infra.ok());
  EXPECT_TRUE(infra.value()["prime_echo"].is_null());

  auto no_bonus = ScoreLine(json::parse(R"({"turns": [{"status": "pass"}]})"), {}, std::nullopt);
  ASSERT_FALSE(no_bonus.ok());
  EXPECT_NE(no_bonus.message().find("--bonus-first"), std::string::npos);
  EXPECT_FALSE(ScoreLine(json::parse(R"({"turns": []})"), {}, bonuses).ok());
  auto bad_turn = ScoreLine(json::parse(R"({"turns": [{"status": "pass"}, {"status": "nope"}]})"), {}, bonuses);
  ASSERT_FALSE(bad_turn.ok());
  EXPECT_EQ(bad_turn.message().rfind("turn 2: ", 0), 0u);
}

}  // namespace
}  // namespace anvil
