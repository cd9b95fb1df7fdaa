#include "run/device_memory.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include "core/files.h"

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
      [&] { ++kills; }, {}, milliseconds(1));
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
      [&] { ++kills; }, {}, milliseconds(1));
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
      reader, 1000, [] { return std::vector<pid_t>{300}; }, [&] { ++kills; }, {}, milliseconds(1));
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
        reader, 1000, [] { return std::vector<pid_t>{}; }, [] {}, {}, std::chrono::seconds(60));
    WaitFor([&] { return reader->reads > 0; });  // Now between two looks a minute apart.
    start = std::chrono::steady_clock::now();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(500));
  EXPECT_EQ(reader->reads, 1);
}

TEST(DeviceMemoryWatchTest, KeepsWhatOtherProcessesHeldButNotThePlannedOnes) {
  auto reader = std::make_shared<FakeReader>();
  reader->Set(400, 100);         // The job's process.
  reader->Set(50, 5000);         // The task server: planned, never another's.
  reader->Set(990001, 3 << 20);  // A hog outside anvil (no such pid here: named by number only).
  DeviceMemoryWatch watch(
      reader, 1 << 30, [] { return std::vector<pid_t>{400}; }, [] {}, {{50, 0}}, milliseconds(1));
  WaitFor([&] { return reader->reads > 3; });
  reader->Set(990001, 0);  // It left: the peak stays.
  const int seen = reader->reads;
  WaitFor([&] { return reader->reads > seen + 3; });
  watch.Stop();
  EXPECT_FALSE(watch.over());
  EXPECT_EQ(watch.peak_bytes(), 100u);
  EXPECT_EQ(watch.others_peak_bytes(), 3u << 20);
  EXPECT_EQ(watch.others(), "pid 990001 held 3 MiB");
}

TEST(DeviceMemoryWatchTest, NoOtherProcessMeansNoOthers) {
  auto reader = std::make_shared<FakeReader>();
  reader->Set(400, 100);
  reader->Set(50, 5000);
  DeviceMemoryWatch watch(
      reader, 1 << 30, [] { return std::vector<pid_t>{400}; }, [] {}, {{50, 0}}, milliseconds(1));
  WaitFor([&] { return reader->reads > 3; });
  watch.Stop();
  EXPECT_EQ(watch.others_peak_bytes(), 0u);
  EXPECT_EQ(watch.others(), "");
}

TEST(DeviceMemoryWatchTest, APlannedProcessBeyondItsBudgetCountsByWhatItHeldBeyond) {
  // The task server's device memory is budgeted: within its budget it is
  // anvil's plan, beyond it another process's doing to a candidate whose
  // device ran out (on an H100 it held 72 GiB of a 40 GiB budget).
  auto reader = std::make_shared<FakeReader>();
  reader->Set(400, 100);
  reader->Set(990050, 6ull << 30);  // Within its 8 GiB.
  DeviceMemoryWatch watch(
      reader, 1ull << 40, [] { return std::vector<pid_t>{400}; }, [] {}, {{990050, 8ull << 30}}, milliseconds(1));
  WaitFor([&] { return reader->reads > 3; });
  EXPECT_EQ(watch.others_peak_bytes(), 0u);
  reader->Set(990050, 11ull << 30);
  WaitFor([&] { return watch.others_peak_bytes() > 0; });
  watch.Stop();
  EXPECT_EQ(watch.others_peak_bytes(), 3ull << 30);
  EXPECT_EQ(watch.others(), "pid 990050 held 11264 MiB, 3072 MiB beyond its budget");
}

TEST(DeviceMemoryTest, OtherHoldersNamesTheBiggestFirstAndCountsTheRest) {
  const pid_t self = getpid();
  std::string comm = ReadFile("/proc/self/comm").value();
  comm.pop_back();  // Its newline.
  std::map<pid_t, std::uint64_t> used = {{self, 2ull << 30},   {990001, 1ull << 20}, {990002, 4ull << 20},
                                         {990003, 3ull << 20}, {990004, 0},          {400, 9ull << 30}};
  EXPECT_EQ(OtherHolders(used, {400}, 3),
            "pid " + std::to_string(self) + " (" + comm +
                ") held 2048 MiB, pid 990002 held 4 MiB, pid 990003 held 3 MiB and 1 more");
  EXPECT_EQ(OtherHolders(used, {400, self, 990001, 990002, 990003}), "");
  // Budgeted: named by what they held beyond their budget, biggest first.
  const std::map<pid_t, std::uint64_t> with_servers = {
      {990005, 9ull << 30}, {990006, 1ull << 20}, {990007, 5ull << 20}};
  EXPECT_EQ(OtherHolders(with_servers, {}, 3, {{990005, 7ull << 30}, {990006, 1ull << 20}}),
            "pid 990005 held 9216 MiB, 2048 MiB beyond its budget, pid 990007 held 5 MiB");
}

TEST(DeviceMemoryTest, TheWordsOfADeviceOutOfMemory) {
  for (const char* text :
       {"forward failed: OutOfMemoryError: CUDA out of memory. Tried to allocate 160.00 GiB.",
        "RuntimeError: CUDA error: out of memory", "cudaMalloc: cudaErrorMemoryAllocation", "CUDA_ERROR_OUT_OF_MEMORY",
        "CUBLAS_STATUS_ALLOC_FAILED when calling cublasCreate(handle)"}) {
    EXPECT_TRUE(SaysDeviceOutOfMemory(text)) << text;
  }
  for (const char* text : {"forward failed: RuntimeError: shape mismatch", "illegal memory access", ""}) {
    EXPECT_FALSE(SaysDeviceOutOfMemory(text)) << text;
  }
}

TEST(DeviceMemoryTest, WaitForIdleDeviceWaitsForTheOthersToLeave) {
  FakeReader reader;
  reader.Set(400, 100);
  reader.Set(990001, 8 << 20);
  std::thread leave([&] {
    std::this_thread::sleep_for(milliseconds(30));
    reader.Set(990001, 0);
  });
  const auto start = std::chrono::steady_clock::now();
  Status idle = WaitForIdleDevice(reader, {400}, milliseconds(5000), milliseconds(2));
  leave.join();
  EXPECT_TRUE(idle.ok()) << idle.message();
  EXPECT_GE(std::chrono::steady_clock::now() - start, milliseconds(30));
}

TEST(DeviceMemoryTest, WaitForIdleDeviceGivesUpNamingWhoHeldIt) {
  FakeReader reader;
  reader.Set(990001, 8 << 20);
  Status idle = WaitForIdleDevice(reader, {}, milliseconds(20), milliseconds(2));
  ASSERT_FALSE(idle.ok());
  EXPECT_EQ(idle.message(), "the device was still not idle after 0 s: pid 990001 held 8 MiB");
  reader.Fail();
  idle = WaitForIdleDevice(reader, {}, milliseconds(20), milliseconds(2));
  ASSERT_FALSE(idle.ok());
  EXPECT_EQ(idle.message(), "the driver is gone");
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
