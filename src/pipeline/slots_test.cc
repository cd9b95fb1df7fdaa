#include "pipeline/slots.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace anvil {
namespace {

TEST(SlotsTest, NeverMoreHoldersThanSlotsAndEveryWaiterGetsOne) {
  Slots slots(3);
  std::atomic<int> in{0}, most{0}, done{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10; ++i) {
        SlotHold hold(slots);
        const int now = ++in;
        int seen = most.load();
        while (now > seen && !most.compare_exchange_weak(seen, now)) {
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        --in;
        ++done;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(done.load(), 80);
  EXPECT_EQ(most.load(), 3);  // Eight threads contend: all three slots were used, never a fourth.
}

TEST(SlotsTest, AWaiterReportsHowLongItWaited) {
  Slots slots(1);
  double waited = -1;
  std::thread other;
  {
    SlotHold first(slots);
    EXPECT_LT(first.waited(), 0.05);
    other = std::thread([&] {
      SlotHold second(slots);
      waited = second.waited();
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  other.join();
  EXPECT_GE(waited, 0.09);
}

TEST(SlotsTest, TryAcquireTakesOnlyAFreeSlot) {
  Slots slots(1);
  EXPECT_TRUE(slots.TryAcquire());
  EXPECT_FALSE(slots.TryAcquire());  // Taken: no wait, no slot.
  slots.Release();
  EXPECT_TRUE(slots.TryAcquire());
  slots.Release();
}

}  // namespace
}  // namespace anvil
