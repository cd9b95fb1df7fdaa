#include "core/memory_room.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace anvil {
namespace {

using std::chrono::milliseconds;

TEST(MemoryRoomTest, ThoseThatFitTogetherHoldAtOnceAndNeverBeyondTheBudget) {
  auto room = std::make_shared<MemoryRoom>(100);
  std::atomic<int64_t> held{0}, most{0};
  std::atomic<int> done{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10; ++i) {
        RoomHold hold(room, 30);
        const int64_t now = held += 30;
        int64_t seen = most.load();
        while (now > seen && !most.compare_exchange_weak(seen, now)) {
        }
        std::this_thread::sleep_for(milliseconds(1));
        held -= 30;
        ++done;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(done.load(), 60);
  EXPECT_EQ(most.load(), 90);  // Three of 30 fit in 100, never a fourth.
  EXPECT_EQ(room->reserved(), 0);
}

TEST(MemoryRoomTest, OneLargerThanTheBudgetWaitsForTheRoomToEmptyThenRunsAlone) {
  auto room = std::make_shared<MemoryRoom>(100);
  std::atomic<bool> big_in{false};
  std::thread big;
  {
    RoomHold small(room, 40);
    big = std::thread([&] {
      RoomHold alone(room, 250);
      big_in = true;
      EXPECT_EQ(room->reserved(), 250);
      std::this_thread::sleep_for(milliseconds(50));
    });
    std::this_thread::sleep_for(milliseconds(100));
    EXPECT_FALSE(big_in.load());  // 40 + 250 > 100: it waits while another holds room.
  }
  big.join();
  EXPECT_TRUE(big_in.load());
  EXPECT_EQ(room->reserved(), 0);
}

TEST(MemoryRoomTest, ALaterSmallOneWaitsBehindAnEarlierLargeOne) {
  auto room = std::make_shared<MemoryRoom>(100);
  std::vector<int> order;
  std::mutex mu;
  auto log = [&](int who) {
    std::lock_guard<std::mutex> lock(mu);
    order.push_back(who);
  };
  std::thread large, small;
  {
    RoomHold first(room, 60);
    large = std::thread([&] {
      RoomHold hold(room, 80);  // 60 + 80 > 100: waits for the first.
      log(1);
    });
    std::this_thread::sleep_for(milliseconds(50));
    small = std::thread([&] {
      RoomHold hold(room, 10);  // Would fit beside the first, but the large one asked before it.
      log(2);
    });
    std::this_thread::sleep_for(milliseconds(50));
    std::lock_guard<std::mutex> lock(mu);
    EXPECT_TRUE(order.empty());
  }
  large.join();
  small.join();
  EXPECT_EQ(order, (std::vector<int>{1, 2}));
}

TEST(MemoryRoomTest, AHoldSaysHowLongItWaitedAndMovesWithItsRoom) {
  auto room = std::make_shared<MemoryRoom>(10);
  RoomHold moved;
  std::atomic<double> waited{-1};
  std::thread other;
  {
    RoomHold first(room, 10);
    EXPECT_LT(first.waited(), 0.05);
    other = std::thread([&] {
      RoomHold second(room, 10);
      waited = second.waited();
    });
    std::this_thread::sleep_for(milliseconds(100));
    moved = std::move(first);  // Still held: the moved-from one gives nothing back.
  }
  std::this_thread::sleep_for(milliseconds(50));
  EXPECT_LT(waited.load(), 0);
  EXPECT_EQ(room->reserved(), 10);
  moved.Reset();
  other.join();
  EXPECT_GE(waited.load(), 0.14);
  EXPECT_EQ(room->reserved(), 0);
}

TEST(MemoryRoomTest, ANullHoldReservesNothing) {
  RoomHold none(nullptr, 1 << 30);
  EXPECT_EQ(none.waited(), 0);
}

}  // namespace
}  // namespace anvil
