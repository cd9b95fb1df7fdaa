#include "cache/cache_prune.h"

#include <gtest/gtest.h>

#include "cache/fake_cache_fixture.h"
#include "core/file_lock.h"

namespace anvil {
namespace {

namespace fs = std::filesystem;

class CachePruneTest : public FakeCacheTest {
 protected:
  // Three artifacts of 1000 bytes used 3, 2 and 1 days ago, and a 10-byte
  // torch probe: 3010 bytes in all.
  void SetUp() override {
    FakeCacheTest::SetUp();
    oldest_ = Artifact(Key('a'), 1000, Age(72));
    middle_ = Artifact(Key('b'), 1000, Age(48));
    newest_ = Artifact(Key('c'), 1000, Age(24));
    probe_ = Write("torch_info/x-v2.json", std::string(10, 'j'));
  }

  PruneResult Prune(PruneOptions options) {
    options.now = now_;
    auto pruned = PruneCache(dir_, options);
    EXPECT_TRUE(pruned.ok()) << pruned.message();
    return pruned.ok() ? pruned.value() : PruneResult{};
  }

  static std::vector<fs::path> Paths(const std::vector<CacheEntry>& entries) {
    std::vector<fs::path> paths;
    for (const CacheEntry& e : entries) paths.push_back(e.path);
    return paths;
  }

  fs::path oldest_, middle_, newest_, probe_;
};

TEST_F(CachePruneTest, EvictsLeastRecentlyUsedUntilTheCacheFits) {
  PruneOptions options;
  options.max_bytes = 2100;
  const PruneResult r = Prune(options);
  EXPECT_EQ(Paths(r.removed), std::vector<fs::path>{oldest_});
  EXPECT_EQ(r.bytes_before, 3010u);
  EXPECT_EQ(r.bytes_after, 2010u);
  EXPECT_EQ(r.RemovedBytes(), 1000u);
  EXPECT_FALSE(fs::exists(oldest_));
  EXPECT_FALSE(fs::exists(dir_ / "artifacts" / "locks" / (Key('a') + ".lock")));
  EXPECT_TRUE(fs::exists(middle_));
  EXPECT_TRUE(fs::exists(newest_));
  EXPECT_TRUE(fs::exists(dir_ / "artifacts" / "locks" / (Key('b') + ".lock")));
}

TEST_F(CachePruneTest, UseNotCreationDecides) {
  Used(oldest_, Age(1));  // Built first, used last.
  PruneOptions options;
  options.max_bytes = 1500;
  const PruneResult r = Prune(options);
  EXPECT_EQ(Paths(r.removed), (std::vector<fs::path>{middle_, newest_}));
  EXPECT_TRUE(fs::exists(oldest_));
}

TEST_F(CachePruneTest, OlderThanEvictsOnlyIdleEntries) {
  PruneOptions options;
  options.older_than = Age(36);
  const PruneResult r = Prune(options);
  EXPECT_EQ(Paths(r.removed), (std::vector<fs::path>{oldest_, middle_}));
  EXPECT_TRUE(fs::exists(newest_));
  EXPECT_EQ(r.bytes_after, 1010u);
}

TEST_F(CachePruneTest, BothBoundsEvictWhatEitherWants) {
  PruneOptions options;
  options.older_than = Age(60);
  options.max_bytes = 1500;
  EXPECT_EQ(Paths(Prune(options).removed), (std::vector<fs::path>{oldest_, middle_}));
}

TEST_F(CachePruneTest, ADryRunSaysWhatWouldGoAndRemovesNothing) {
  fs::remove(dir_ / "artifacts" / "locks" / (Key('b') + ".lock"));
  PruneOptions options;
  options.max_bytes = 1500;
  options.dry_run = true;
  const PruneResult r = Prune(options);
  EXPECT_EQ(Paths(r.removed), (std::vector<fs::path>{oldest_, middle_}));
  EXPECT_EQ(r.bytes_after, 1010u);
  EXPECT_TRUE(fs::exists(oldest_ / "complete"));
  EXPECT_TRUE(fs::exists(middle_ / "complete"));
  EXPECT_TRUE(fs::exists(dir_ / "artifacts" / "locks" / (Key('a') + ".lock")));
  EXPECT_FALSE(fs::exists(dir_ / "artifacts" / "locks" / (Key('b') + ".lock")));  // None made.
  EXPECT_EQ(fs::last_write_time(oldest_), now_ - Age(72));
}

TEST_F(CachePruneTest, AnEntryABuilderHoldsIsKeptAndTheNextOneGoes) {
  FileLock builder(dir_ / "artifacts" / "locks" / (Key('a') + ".lock"));
  ASSERT_TRUE(builder.held());
  PruneOptions options;
  options.max_bytes = 2100;
  const PruneResult r = Prune(options);
  EXPECT_EQ(Paths(r.in_use), std::vector<fs::path>{oldest_});
  EXPECT_EQ(Paths(r.removed), std::vector<fs::path>{middle_});
  EXPECT_TRUE(fs::exists(oldest_ / "complete"));
  EXPECT_TRUE(fs::exists(dir_ / "artifacts" / "locks" / (Key('a') + ".lock")));
}

TEST_F(CachePruneTest, APreparedTaskIsKeptWhileAPreparerOrAnEvalHoldsIt) {
  const fs::path task = PreparedTask("relu-0123456789abcdef", 5000, Age(100));
  PruneOptions options;
  options.older_than = Age(90);
  {
    FileLock preparer(dir_ / "tasks" / "relu-0123456789abcdef.lock");
    EXPECT_EQ(Paths(Prune(options).in_use), std::vector<fs::path>{task});
  }
  {
    FileLock eval(task, /*wait=*/true, LockMode::kShared);  // As PrepareTask's PreparedTask::in_use.
    ASSERT_TRUE(eval.held());
    const PruneResult r = Prune(options);
    EXPECT_EQ(Paths(r.in_use), std::vector<fs::path>{task});
    EXPECT_TRUE(r.removed.empty());
    EXPECT_TRUE(fs::exists(task / "spec.json"));
  }
  const PruneResult r = Prune(options);
  EXPECT_EQ(Paths(r.removed), std::vector<fs::path>{task});
  EXPECT_FALSE(fs::exists(task));
  EXPECT_FALSE(fs::exists(dir_ / "tasks" / "relu-0123456789abcdef.lock"));
}

TEST_F(CachePruneTest, WhatIsNoEntryIsNeverTouched) {
  Write("sandbox/cpu-1.txt", "ok");
  Write("tasks/broken-0123456789abcdef.lock", "");
  Write("artifacts/.build-AbCdEf/main.o", "o");
  const fs::path outside = Write("../" + dir_.filename().string() + "-outside/keep", "precious");
  fs::create_directory_symlink(outside.parent_path(), dir_ / "tasks" / "evil-0123456789abcdef");
  fs::create_symlink(outside, newest_ / "link");
  PruneOptions options;
  options.max_bytes = 0;
  const PruneResult r = Prune(options);
  EXPECT_EQ(r.removed.size(), 3u);
  EXPECT_TRUE(r.failures.empty());
  EXPECT_EQ(r.bytes_after, 10u + 2 + 1);
  EXPECT_TRUE(fs::exists(probe_));
  EXPECT_TRUE(fs::exists(dir_ / "sandbox" / "cpu-1.txt"));
  EXPECT_TRUE(fs::exists(dir_ / "tasks" / "broken-0123456789abcdef.lock"));
  EXPECT_TRUE(fs::exists(dir_ / "artifacts" / ".build-AbCdEf" / "main.o"));
  EXPECT_TRUE(fs::is_symlink(dir_ / "tasks" / "evil-0123456789abcdef"));
  EXPECT_TRUE(fs::exists(outside));
  (void)RemoveTree(outside.parent_path());
}

TEST_F(CachePruneTest, RemovesLeftoversOfAKilledPrune) {
  const fs::path leftover =
      Write(std::string("artifacts/") + kPruningPrefix + "1-" + Key('z') + "/lib.so", std::string(500, 'x'));
  PruneOptions options;
  options.older_than = Age(1000);
  const PruneResult r = Prune(options);
  EXPECT_TRUE(r.removed.empty());
  EXPECT_EQ(r.leftovers.size(), 1u);
  EXPECT_EQ(r.RemovedBytes(), 500u);
  EXPECT_FALSE(fs::exists(leftover.parent_path()));
}

TEST_F(CachePruneTest, RoomWantedEvictsUntilThatMuchIsGone) {
  PruneOptions options;
  options.min_removed_bytes = 1500;  // Two entries' worth.
  const PruneResult r = Prune(options);
  EXPECT_EQ(Paths(r.removed), (std::vector<fs::path>{oldest_, middle_}));
  EXPECT_TRUE(fs::exists(newest_));
}

TEST_F(CachePruneTest, RecentEntriesStayWhateverTheBoundSays) {
  PruneOptions options;
  options.max_bytes = 0;
  options.keep_newer_than = std::chrono::hours(36);
  const PruneResult r = Prune(options);
  EXPECT_EQ(Paths(r.removed), (std::vector<fs::path>{oldest_, middle_}));
  EXPECT_TRUE(fs::exists(newest_));  // Used a day ago.
}

TEST_F(CachePruneTest, NeedsABoundAndAFolder) {
  auto unbounded = PruneCache(dir_, PruneOptions{});
  ASSERT_FALSE(unbounded.ok());
  EXPECT_NE(unbounded.message().find("bound"), std::string::npos);
  PruneOptions options;
  options.max_bytes = 0;
  EXPECT_FALSE(PruneCache(dir_ / "nope", options).ok());
  EXPECT_TRUE(fs::exists(oldest_));
}

}  // namespace
}  // namespace anvil
