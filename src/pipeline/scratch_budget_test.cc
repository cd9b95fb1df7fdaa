#include "pipeline/scratch_budget.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace anvil {
namespace {

TEST(ScratchBudgetTest, SideBySideEvaluationsShareOneLimit) {
  ScratchBudget budget(100);
  EXPECT_EQ(budget.Reserve(10, 60), 60u);   // All it wants.
  EXPECT_EQ(budget.Reserve(10, 60), 40u);   // What is left, at least its need.
  EXPECT_EQ(budget.Reserve(101, 200), 0u);  // Never fits: the caller goes to the disk.
  // A third needs 30: it waits until 30 are free.
  std::atomic<bool> got{false};
  std::thread waiter([&] {
    EXPECT_EQ(budget.Reserve(30, 30), 30u);
    got = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(got);
  budget.Release(40);
  waiter.join();
  EXPECT_TRUE(got);
  budget.Release(60);
  budget.Release(30);
  EXPECT_EQ(budget.Reserve(100, 100), 100u);
}

TEST(ScratchBudgetTest, TheMemoryBudgetIsAtMostHalfTheAvailableMemory) {
  ScratchBudget& m = ScratchBudget::Memory();
  EXPECT_EQ(&m, &ScratchBudget::Memory());
  EXPECT_GT(m.limit(), 0u);
  ScratchReservation r(m, 1, 1);
  EXPECT_EQ(r.bytes(), 1u);
}

}  // namespace
}  // namespace anvil
