#include "pipeline/device_gate.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace anvil {
namespace {

using std::chrono::milliseconds;

TEST(DeviceGateTest, SharedHoldsOverlapAndAnExclusiveOneIsAlone) {
  DeviceGate gate;
  std::atomic<int> shared_in{0}, exclusive_in{0}, max_shared{0}, violations{0};
  auto shared_user = [&] {
    for (int i = 0; i < 20; ++i) {
      SharedDeviceHold hold(gate);
      const int now = ++shared_in;
      if (exclusive_in.load() != 0) ++violations;
      int seen = max_shared.load();
      while (now > seen && !max_shared.compare_exchange_weak(seen, now)) {
      }
      std::this_thread::sleep_for(milliseconds(1));
      --shared_in;
    }
  };
  auto exclusive_user = [&] {
    for (int i = 0; i < 10; ++i) {
      ExclusiveDeviceHold hold(gate);
      if (++exclusive_in != 1 || shared_in.load() != 0) ++violations;
      std::this_thread::sleep_for(milliseconds(1));
      --exclusive_in;
    }
  };
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) threads.emplace_back(shared_user);
  for (int i = 0; i < 2; ++i) threads.emplace_back(exclusive_user);
  for (auto& t : threads) t.join();
  EXPECT_EQ(violations.load(), 0);
  EXPECT_GT(max_shared.load(), 1);  // Correctness runs really did share it.
}

TEST(DeviceGateTest, AWaitingTimedRunGoesBeforeNewSharedUsers) {
  DeviceGate gate;
  gate.AcquireShared();
  std::atomic<bool> exclusive_got{false}, late_shared_got{false};
  std::thread timed([&] {
    gate.AcquireExclusive();
    exclusive_got = true;
    std::this_thread::sleep_for(milliseconds(50));
    EXPECT_FALSE(late_shared_got.load());
    gate.ReleaseExclusive();
  });
  std::this_thread::sleep_for(milliseconds(30));  // The timed run is waiting now.
  std::thread late([&] {
    gate.AcquireShared();
    late_shared_got = true;
    gate.ReleaseShared();
  });
  std::this_thread::sleep_for(milliseconds(30));
  EXPECT_FALSE(late_shared_got.load());  // Queued behind the waiting timed run.
  EXPECT_FALSE(exclusive_got.load());    // Which waits for the first shared hold.
  gate.ReleaseShared();                  // The first shared hold ends: the timed run goes.
  timed.join();
  late.join();
  EXPECT_TRUE(exclusive_got.load());
  EXPECT_TRUE(late_shared_got.load());
}

TEST(DeviceGateTest, HoldsSayHowLongTheyWaited) {
  DeviceGate gate;
  {
    SharedDeviceHold first(gate);
    EXPECT_LT(first.waited(), 0.05);  // Free: no wait.
  }
  double waited = 0;
  std::thread holder;
  {
    ExclusiveDeviceHold timed(gate);
    holder = std::thread([&] {
      SharedDeviceHold later(gate);  // Waits for the timed run to end.
      waited = later.waited();
    });
    std::this_thread::sleep_for(milliseconds(60));
  }
  holder.join();
  EXPECT_GE(waited, 0.05);
}

}  // namespace
}  // namespace anvil
