#include "cache/cache_scan.h"

#include <gtest/gtest.h>

#include "cache/fake_cache_fixture.h"
#include "compile/artifact_cache.h"
#include "compile/host_pch.h"

namespace anvil {
namespace {

namespace fs = std::filesystem;

class CacheScanTest : public FakeCacheTest {};

TEST_F(CacheScanTest, SortsEntriesByKindWithSizesOldestUseFirst) {
  const fs::path artifact = Artifact(Key('a'), 1000, Age(5));
  const fs::path torch_pch = TorchPch(Key('b'), 5000, Age(50));
  const fs::path host_pch = Artifact(Key('c'), 3000, Age(1), std::string(kHostPchHeader) + ".gch");
  Write("artifacts/failed/" + Key('d') + ".log", std::string(100, 'e'));
  const fs::path task = PreparedTask("relu-0123456789abcdef", 2000, Age(24));
  Used(dir_ / "artifacts" / "failed" / (Key('d') + ".log"), Age(10));

  auto scanned = ScanCache(dir_);
  ASSERT_TRUE(scanned.ok()) << scanned.message();
  const CacheContents& c = scanned.value();
  ASSERT_EQ(c.entries.size(), 5u);
  EXPECT_EQ(c.entries[0].path, torch_pch);
  EXPECT_EQ(c.entries[0].kind, CacheKind::kTorchPch);
  EXPECT_EQ(c.entries[0].bytes, 5000u);  // The artifact's own `complete` marker is empty.
  EXPECT_EQ(c.entries[0].lock, dir_ / "artifacts" / "locks" / (Key('b') + ".lock"));
  EXPECT_EQ(c.entries[1].path, task);
  EXPECT_EQ(c.entries[1].kind, CacheKind::kTask);
  EXPECT_EQ(c.entries[1].lock, dir_ / "tasks" / "relu-0123456789abcdef.lock");
  EXPECT_EQ(c.entries[2].kind, CacheKind::kFailedBuild);
  EXPECT_EQ(c.entries[2].bytes, 100u);
  EXPECT_EQ(c.entries[2].lock, dir_ / "artifacts" / "locks" / (Key('d') + ".lock"));
  EXPECT_EQ(c.entries[3].path, artifact);
  EXPECT_EQ(c.entries[3].kind, CacheKind::kArtifact);
  EXPECT_EQ(c.entries[4].path, host_pch);
  EXPECT_EQ(c.entries[4].kind, CacheKind::kHostPch);
  EXPECT_EQ(c.entries[4].last_used, now_ - Age(1));

  const auto by_kind = c.ByKind();
  EXPECT_EQ(by_kind[static_cast<int>(CacheKind::kArtifact)].count, 1);
  EXPECT_EQ(by_kind[static_cast<int>(CacheKind::kTask)].bytes, 2000u);
  EXPECT_EQ(c.Total().bytes, 1000u + 5000 + 3000 + 100 + 2000);
}

TEST_F(CacheScanTest, KeptVerdictsAreEntriesOfTheirOwn) {
  Write("verdicts/" + std::string(64, 'a') + ".json", std::string(300, 'v'));
  Write("verdicts/.tmp-write", "x");  // A write in progress: not an entry.
  auto scanned = ScanCache(dir_);
  ASSERT_TRUE(scanned.ok()) << scanned.message();
  ASSERT_EQ(scanned.value().entries.size(), 1u);
  EXPECT_EQ(scanned.value().entries[0].kind, CacheKind::kVerdict);
  EXPECT_EQ(scanned.value().entries[0].bytes, 300u);
  EXPECT_STREQ(CacheKindName(CacheKind::kVerdict), "verdicts");
}

TEST_F(CacheScanTest, CountsWhatIsNoEntryAsOtherAndFollowsNoLink) {
  Artifact(Key('a'), 1000, Age(5));
  Write("torch_info/x-v2.json", std::string(10, 'j'));
  Write("sandbox/cpu-1.txt", std::string(20, 'k'));
  Write("tasks/broken-0123456789abcdef.lock", "");                   // A task that failed to prepare.
  Write("artifacts/.build-AbCdEf/main.o", std::string(30, 'o'));     // A build in progress.
  Write("artifacts/" + Key('e') + "/main.o", std::string(40, 'o'));  // Not published: no `complete`.
  const fs::path outside = Write("../" + dir_.filename().string() + "-outside/big", std::string(100000, 'b'));
  fs::create_directory_symlink(outside.parent_path(), dir_ / "tasks" / "evil-0123456789abcdef");
  fs::create_symlink(outside, dir_ / "artifacts" / Key('a') / "link");

  auto scanned = ScanCache(dir_);
  ASSERT_TRUE(scanned.ok()) << scanned.message();
  const CacheContents& c = scanned.value();
  ASSERT_EQ(c.entries.size(), 1u);
  EXPECT_EQ(c.entries[0].bytes, 1000u);
  // torch_info/, sandbox/, the lock files, locks/, .build-*, the unpublished folder, the link.
  EXPECT_EQ(c.other.count, 7);
  EXPECT_EQ(c.other.bytes, 10u + 20 + 30 + 40);
  EXPECT_TRUE(c.leftovers.empty());
  (void)RemoveTree(outside.parent_path());
}

TEST_F(CacheScanTest, FindsLeftoversOfAKilledPrune) {
  Write(std::string("tasks/") + kPruningPrefix + "123-relu-0123456789abcdef/spec.json", std::string(50, 's'));
  auto scanned = ScanCache(dir_);
  ASSERT_TRUE(scanned.ok());
  EXPECT_TRUE(scanned.value().entries.empty());
  ASSERT_EQ(scanned.value().leftovers.size(), 1u);
  EXPECT_EQ(scanned.value().leftovers[0].bytes, 50u);
  EXPECT_EQ(scanned.value().other.bytes, 50u);
}

TEST_F(CacheScanTest, AMissingFolderIsAnError) {
  auto scanned = ScanCache(dir_ / "nope");
  ASSERT_FALSE(scanned.ok());
  EXPECT_NE(scanned.message().find("no cache folder"), std::string::npos);
}

TEST_F(CacheScanTest, ACacheHitMarksTheArtifactUsed) {
  const fs::path artifact = Artifact(Key('a'), 10, Age(100));
  ArtifactCache cache(dir_ / "artifacts");
  ASSERT_TRUE(cache.Lookup(Key('a')).has_value());
  EXPECT_GT(fs::last_write_time(artifact), now_ - std::chrono::minutes(1));
  EXPECT_FALSE(cache.Lookup(Key('f')).has_value());
}

}  // namespace
}  // namespace anvil
