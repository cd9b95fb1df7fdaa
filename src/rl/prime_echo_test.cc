#include "rl/prime_echo.h"

#include <gtest/gtest.h>

namespace anvil {
namespace {

constexpr PrimeEchoOptions kBonuses{0.75, 0.2, 0.1};

TEST(PrimeEchoTest, AnchorsOnTheFirstTurnAndAddsTheEarlyBonus) {
  EXPECT_DOUBLE_EQ(*PrimeEcho({1.5}, kBonuses), 1.7);               // 0.75 * 1.5 + 0.25 * 1.5 + 0.2
  EXPECT_DOUBLE_EQ(*PrimeEcho({-1.0, 2.0}, kBonuses), -0.15);       // -0.75 + 0.5 + 0.1
  EXPECT_DOUBLE_EQ(*PrimeEcho({-1.0, -0.2, 1.0}, kBonuses), -0.5);  // a pass at turn 3: no bonus
  EXPECT_DOUBLE_EQ(*PrimeEcho({-1.0, -1.0, -1.0}, kBonuses), -1.0);
  EXPECT_DOUBLE_EQ(*PrimeEcho({1.0, 2.0}, {1.0, 0.2, 0.1}), 1.2);  // alpha 1: turn 1 alone, and its bonus
}

TEST(PrimeEchoTest, TheMachinesFailureOrNoTurnGivesNone) {
  EXPECT_FALSE(PrimeEcho({-1.0, std::nullopt}, kBonuses));
  EXPECT_FALSE(PrimeEcho({std::nullopt}, kBonuses));
  EXPECT_FALSE(PrimeEcho({}, kBonuses));
}

}  // namespace
}  // namespace anvil
