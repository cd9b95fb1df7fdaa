#include "cache/cache_keeper.h"

#include <gtest/gtest.h>

#include "cache/fake_cache_fixture.h"

namespace anvil {
namespace {

namespace fs = std::filesystem;

class CacheKeeperTest : public FakeCacheTest {
 protected:
  // Three artifacts of 1000 bytes, used 3 days, 2 days and a minute ago.
  void SetUp() override {
    FakeCacheTest::SetUp();
    oldest_ = Artifact(Key('a'), 1000, Age(72));
    middle_ = Artifact(Key('b'), 1000, Age(48));
    recent_ = Used(Artifact(Key('c'), 1000, Age(0)), Age(0));
  }

  static CacheBound Bound(std::uintmax_t max_bytes) {
    CacheBound bound;
    bound.max_bytes = max_bytes;
    bound.floor = false;
    return bound;
  }

  fs::path oldest_, middle_, recent_;
};

TEST_F(CacheKeeperTest, OverItsBoundTheLeastRecentlyUsedGo) {
  CacheKeeper keeper(dir_, Bound(2000));
  const PruneResult r = keeper.KeepNow();
  ASSERT_EQ(r.removed.size(), 1u);
  EXPECT_FALSE(fs::exists(oldest_));
  EXPECT_TRUE(fs::exists(middle_));
  EXPECT_TRUE(fs::exists(recent_));
}

TEST_F(CacheKeeperTest, WhatWasUsedRecentlyStaysEvenOverTheBound) {
  CacheKeeper keeper(dir_, Bound(0));
  const PruneResult r = keeper.KeepNow();
  EXPECT_EQ(r.removed.size(), 2u);
  EXPECT_TRUE(fs::exists(recent_));  // A build between its compile and its run.
}

TEST_F(CacheKeeperTest, WithinItsBoundNothingGoes) {
  CacheKeeper keeper(dir_, Bound(1 << 20));
  EXPECT_TRUE(keeper.KeepNow().removed.empty());
  EXPECT_TRUE(fs::exists(oldest_));
}

TEST_F(CacheKeeperTest, ARoutineCheckRunsAtMostOncePerPeriodAndIsWaitedForAtTheEnd) {
  {
    CacheKeeper keeper(dir_, Bound(2000));
    keeper.Tick();
    keeper.Tick();  // Within the period: nothing more.
  }                 // Waits for the check under way.
  EXPECT_FALSE(fs::exists(oldest_));
  EXPECT_TRUE(fs::exists(middle_));  // One check, not two: the bound held after it.
  Used(middle_, Age(0));
  Artifact(Key('d'), 1000, Age(96));
  {
    CacheKeeper keeper(dir_, Bound(2000));
    keeper.Tick();
  }
  EXPECT_FALSE(fs::exists(dir_ / "artifacts" / Key('d')));
}

TEST_F(CacheKeeperTest, TheDefaultBoundIsHalfTheDisk) {
  EXPECT_GT(DefaultCacheMaxBytes(dir_), 0u);
  EXPECT_EQ(DefaultCacheMaxBytes(dir_ / "not" / "made" / "yet"), DefaultCacheMaxBytes(dir_));
}

}  // namespace
}  // namespace anvil
