#include "core/stats.h"

#include <gtest/gtest.h>

namespace anvil {
namespace {

TEST(StatsTest, EmptyIsZero) {
  TimingStats s = ComputeStats({});
  EXPECT_EQ(s.samples, 0);
  EXPECT_EQ(s.median_ms, 0);
}

TEST(StatsTest, MedianAndQuartilesIgnoreOutliers) {
  TimingStats s = ComputeStats({1, 2, 3, 4, 100});
  EXPECT_EQ(s.samples, 5);
  EXPECT_DOUBLE_EQ(s.median_ms, 3);
  EXPECT_DOUBLE_EQ(s.p25_ms, 2);
  EXPECT_DOUBLE_EQ(s.p75_ms, 4);
  EXPECT_DOUBLE_EQ(s.iqr_ms, 2);
  EXPECT_DOUBLE_EQ(s.min_ms, 1);
  EXPECT_DOUBLE_EQ(s.max_ms, 100);
  EXPECT_DOUBLE_EQ(s.mean_ms, 22);
  EXPECT_GT(s.cv, 1.0);
}

TEST(StatsTest, ConstantSamplesHaveZeroSpread) {
  TimingStats s = ComputeStats({2.5, 2.5, 2.5, 2.5});
  EXPECT_DOUBLE_EQ(s.median_ms, 2.5);
  EXPECT_DOUBLE_EQ(s.cv, 0);
  EXPECT_DOUBLE_EQ(s.iqr_ms, 0);
}

}  // namespace
}  // namespace anvil
