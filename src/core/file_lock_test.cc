#include "core/file_lock.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

#include "core/files.h"

namespace anvil {
namespace {

TEST(FileLockTest, SecondHolderWaitsForTheFirst) {
  auto dir = MakeTempDir("anvil-lock-test-");
  ASSERT_TRUE(dir.ok());
  auto path = dir.value() / "x.lock";
  std::atomic<int> order{0};
  int first_released = 0, second_acquired = 0;
  std::thread first([&] {
    FileLock lock(path);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    first_released = ++order;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  {
    FileLock lock(path);
    second_acquired = ++order;
  }
  first.join();
  EXPECT_EQ(first_released, 1);
  EXPECT_EQ(second_acquired, 2);
  (void)RemoveTree(dir.value());
}

TEST(FileLockTest, ATryThatFindsTheLockHeldGoesOnWithoutIt) {
  auto dir = MakeTempDir("anvil-lock-test-");
  ASSERT_TRUE(dir.ok());
  auto path = dir.value() / "x.lock";
  {
    FileLock first(path);
    EXPECT_TRUE(first.held());
    // flock locks belong to the open file: a second open in the same process conflicts too.
    FileLock second(path, /*wait=*/false);
    EXPECT_FALSE(second.held());
  }
  FileLock after(path, /*wait=*/false);
  EXPECT_TRUE(after.held());
  (void)RemoveTree(dir.value());
}

TEST(FileLockTest, AWaiterWhoseFileItsHolderUnlinkedLocksTheFileAnew) {
  auto dir = MakeTempDir("anvil-lock-test-");
  ASSERT_TRUE(dir.ok());
  auto path = dir.value() / "x.lock";
  auto holder = std::make_unique<FileLock>(path);
  std::atomic<bool> waiter_held{false};
  std::thread waiter([&] {
    FileLock lock(path);
    waiter_held = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  // As `anvil cache prune` does: unlink while held, then release. A newcomer
  // locks a fresh file meanwhile; the waiter must not think it holds the lock too.
  std::filesystem::remove(path);
  auto newcomer = std::make_unique<FileLock>(path, /*wait=*/false);
  ASSERT_TRUE(newcomer->held());
  holder.reset();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_FALSE(waiter_held);
  newcomer.reset();
  waiter.join();
  EXPECT_TRUE(waiter_held);
  (void)RemoveTree(dir.value());
}

TEST(FileLockTest, AFolderIsLockedAsItIsSharedOrExclusive) {
  auto dir = MakeTempDir("anvil-lock-test-");
  ASSERT_TRUE(dir.ok());
  {
    FileLock reader(dir.value(), /*wait=*/false, LockMode::kShared);
    FileLock other_reader(dir.value(), /*wait=*/false, LockMode::kShared);
    EXPECT_TRUE(reader.held());
    EXPECT_TRUE(other_reader.held());
    FileLock remover(dir.value(), /*wait=*/false);
    EXPECT_FALSE(remover.held());
  }
  FileLock remover(dir.value(), /*wait=*/false);
  EXPECT_TRUE(remover.held());
  EXPECT_TRUE(std::filesystem::is_empty(dir.value()));
  (void)RemoveTree(dir.value());
}

}  // namespace
}  // namespace anvil
