#include "core/fixed.h"

#include <gtest/gtest.h>

namespace anvil {
namespace {

TEST(FixedTest, RoundsToTheDigitsAsked) {
  EXPECT_EQ(Fixed(1.256, 2), "1.26");
  EXPECT_EQ(Fixed(3.0, 1), "3.0");
  EXPECT_EQ(Fixed(-0.04, 1), "-0.0");
  EXPECT_EQ(Fixed(12345.6, 0), "12346");
}

}  // namespace
}  // namespace anvil
