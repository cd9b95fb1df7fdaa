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
  const DeviceGate::Shared first = gate.AcquireShared();
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
    const DeviceGate::Shared mine = gate.AcquireShared();
    late_shared_got = true;
    gate.ReleaseShared(mine);
  });
  std::this_thread::sleep_for(milliseconds(30));
  EXPECT_FALSE(late_shared_got.load());  // Queued behind the waiting timed run.
  EXPECT_FALSE(exclusive_got.load());    // Which waits for the first shared hold.
  gate.ReleaseShared(first);             // The first shared hold ends: the timed run goes.
  timed.join();
  late.join();
  EXPECT_TRUE(exclusive_got.load());
  EXPECT_TRUE(late_shared_got.load());
}

// A hang (or a task's preparation) holding the device shared must not stall
// every other shared user behind the timed run that waits for it; but once the
// long holder is gone, the timed run goes before any newcomer.
TEST(DeviceGateTest, SharedUsersPassATimedRunStuckBehindALongHoldButNotAfterIt) {
  DeviceGate gate;
  const DeviceGate::Shared hang = gate.AcquireShared();
  std::atomic<bool> timed_got{false}, timed_done{false}, newcomer_after_got{false};
  std::thread timed([&] {
    ExclusiveDeviceHold hold(gate);
    timed_got = true;
    std::this_thread::sleep_for(milliseconds(100));
    EXPECT_FALSE(newcomer_after_got.load());
    timed_done = true;
  });
  std::this_thread::sleep_for(milliseconds(50));  // The timed run waits.
  // Before the hang has held the device kLongHold, a newcomer waits.
  std::atomic<bool> early_got{false};
  std::thread early([&] {
    SharedDeviceHold hold(gate);
    early_got = true;
    std::this_thread::sleep_for(milliseconds(300));
  });
  std::this_thread::sleep_for(milliseconds(500));
  EXPECT_FALSE(early_got.load());
  // Once it has, the newcomer passes the timed run, which still waits.
  std::this_thread::sleep_for(DeviceGate::kLongHold);
  EXPECT_TRUE(early_got.load());
  EXPECT_FALSE(timed_got.load());
  gate.ReleaseShared(hang);  // The hang is killed; the newcomer (300 ms) is still running.
  std::thread after([&] {
    std::this_thread::sleep_for(milliseconds(20));
    SharedDeviceHold hold(gate);  // Came after the long holder left: waits for the timed run.
    newcomer_after_got = true;
    EXPECT_TRUE(timed_done.load());
  });
  early.join();
  timed.join();
  after.join();
  EXPECT_TRUE(timed_got.load());
  EXPECT_TRUE(newcomer_after_got.load());
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
