#include "core/file_lock.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
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

}  // namespace
}  // namespace anvil
