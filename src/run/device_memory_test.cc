#include "run/device_memory.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

namespace anvil {
namespace {

using std::chrono::milliseconds;

// What the driver would say: each process's bytes, changed by the test.
class FakeReader : public DeviceMemoryReader {
 public:
  void Set(pid_t pid, std::uint64_t bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    used_[pid] = bytes;
  }
  void Fail() { fail_ = true; }
  Result<std::map<pid_t, std::uint64_t>> Read() override {
    ++reads;
    if (fail_) return Status::MachineError("the driver is gone");
    std::lock_guard<std::mutex> lock(mu_);
    return used_;
  }
  std::uint64_t DeviceBytes() const override { return 80ull << 30; }
  std::atomic<int> reads{0};

 private:
  std::mutex mu_;
  std::map<pid_t, std::uint64_t> used_;
  std::atomic<bool> fail_{false};
};

void WaitFor(const std::function<bool()>& done) {
  for (int i = 0; i < 500 && !done(); ++i) std::this_thread::sleep_for(milliseconds(2));
}

TEST(DeviceMemoryWatchTest, TheJobsProcessesTogetherOverTheQuotaAreKilledOnce) {
  auto reader = std::make_shared<FakeReader>();
  reader->Set(100, 600);  // The job's two processes...
  reader->Set(101, 300);
  reader->Set(7, 1 << 20);  // ...and another's, far over: not the job's.
  std::atomic<int> kills{0};
  DeviceMemoryWatch watch(
      reader, 1000,
      [] {
        return std::vector<pid_t>{100, 101};
      },
      [&] { ++kills; }, milliseconds(1));
  WaitFor([&] { return reader->reads > 5; });
  EXPECT_FALSE(watch.over());
  EXPECT_EQ(watch.peak_bytes(), 900u);
  reader->Set(101, 500);  // 1100 together.
  WaitFor([&] { return watch.over(); });
  watch.Stop();
  EXPECT_TRUE(watch.over());
  EXPECT_EQ(kills, 1);
  EXPECT_EQ(watch.peak_bytes(), 1100u);
  EXPECT_EQ(watch.error(), "");
}

TEST(DeviceMemoryWatchTest, AProcessThatJoinsTheJobLaterCounts) {
  auto reader = std::make_shared<FakeReader>();
  reader->Set(200, 800);
  reader->Set(201, 800);
  std::atomic<bool> forked{false};
  std::atomic<int> kills{0};
  DeviceMemoryWatch watch(
      reader, 1000,
      [&] {
        return forked ? std::vector<pid_t>{200, 201} : std::vector<pid_t>{200};
      },
      [&] { ++kills; }, milliseconds(1));
  WaitFor([&] { return reader->reads > 5; });
  EXPECT_FALSE(watch.over());
  forked = true;
  WaitFor([&] { return watch.over(); });
  watch.Stop();
  EXPECT_EQ(kills, 1);
}

TEST(DeviceMemoryWatchTest, AFailedReadStopsTheWatchAndSaysWhyWithoutAKill) {
  auto reader = std::make_shared<FakeReader>();
  reader->Set(300, 5000);
  reader->Fail();
  std::atomic<int> kills{0};
  DeviceMemoryWatch watch(
      reader, 1000, [] { return std::vector<pid_t>{300}; }, [&] { ++kills; }, milliseconds(1));
  WaitFor([&] { return !watch.error().empty(); });
  watch.Stop();
  EXPECT_EQ(kills, 0);
  EXPECT_FALSE(watch.over());
  EXPECT_EQ(watch.error(), "the driver is gone");
}

TEST(DeviceMemoryWatchTest, StopEndsTheWatchBetweenTwoLooks) {
  auto reader = std::make_shared<FakeReader>();
  std::chrono::steady_clock::time_point start;
  {
    DeviceMemoryWatch watch(
        reader, 1000, [] { return std::vector<pid_t>{}; }, [] {}, std::chrono::seconds(60));
    WaitFor([&] { return reader->reads > 0; });  // Now between two looks a minute apart.
    start = std::chrono::steady_clock::now();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(500));
  EXPECT_EQ(reader->reads, 1);
}

TEST(DeviceMemoryQuotaTest, TheMessageNamesTheQuotaAndWhatWasHeld) {
  EXPECT_EQ(OverDeviceMemoryQuota(40ull << 30, 41ull << 30),
            "went over its device-memory quota of 40960 MiB (it held 41984 MiB, by the driver's count) and anvil "
            "killed it");
}

TEST(NvmlReaderTest, SaysWhyWhenItCannotBeUsedAndReadsWhenItCan) {
  std::string why;
  auto reader = NvmlReader(&why);
  if (reader == nullptr) {
    EXPECT_FALSE(why.empty());  // No driver here (the CPU machines): said, not crashed.
    return;
  }
  EXPECT_GT(reader->DeviceBytes(), 0u);
  auto used = reader->Read();
  ASSERT_TRUE(used.ok()) << used.message();
}

}  // namespace
}  // namespace anvil
