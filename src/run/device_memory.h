// A candidate's device memory under a quota (issue 38, docs/sandbox.md
// "Quotas"): NVML's per-process accounting, read every few milliseconds while
// the candidate's processes run; when they hold more than the quota together,
// they are killed and the verdict names the quota. A control group cannot
// count device memory, and the candidate allocates it through the driver in
// its own process: only the driver's accounting sees it. An allocation is not
// refused at the quota (nothing stands between the candidate and the driver):
// it is seen at the next read and the processes end then.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/status.h"

namespace anvil {

// Each process's device memory now, over every device, by pid.
class DeviceMemoryReader {
 public:
  virtual ~DeviceMemoryReader() = default;
  virtual Result<std::map<pid_t, std::uint64_t>> Read() = 0;
  // The smallest device's memory (the quota's scale).
  virtual std::uint64_t DeviceBytes() const = 0;
};

// NVML's (libnvidia-ml.so.1, opened at first use and kept): null where it
// cannot be used here (no driver, no device), `why_not` saying why.
std::shared_ptr<DeviceMemoryReader> NvmlReader(std::string* why_not = nullptr);

// Watches the processes `pids` names (read again at each look: the job's
// control group) until destroyed: when their device memory together passes
// `quota_bytes`, calls `over` once, on its own thread (kill them there).
class DeviceMemoryWatch {
 public:
  DeviceMemoryWatch(std::shared_ptr<DeviceMemoryReader> reader, std::uint64_t quota_bytes,
                    std::function<std::vector<pid_t>()> pids, std::function<void()> over,
                    std::chrono::milliseconds every = std::chrono::milliseconds(20));
  ~DeviceMemoryWatch();
  DeviceMemoryWatch(const DeviceMemoryWatch&) = delete;
  DeviceMemoryWatch& operator=(const DeviceMemoryWatch&) = delete;

  // Stops watching (the destructor does too); the answers below hold after.
  void Stop();
  // Whether the processes passed the quota (and `over` ran).
  bool over() const { return over_.load(); }
  // The most they held together at one look.
  std::uint64_t peak_bytes() const { return peak_.load(); }
  // Why a look failed ("" if none failed): the watch stops at the first.
  std::string error() const;

 private:
  void Loop();

  std::shared_ptr<DeviceMemoryReader> reader_;
  std::uint64_t quota_;
  std::function<std::vector<pid_t>()> pids_;
  std::function<void()> on_over_;
  std::chrono::milliseconds every_;
  std::mutex stop_mu_;
  std::condition_variable stop_cv_;  // Wakes the watch between looks when it is stopped.
  std::atomic<bool> stop_{false};
  std::atomic<bool> over_{false};
  std::atomic<std::uint64_t> peak_{0};
  mutable std::mutex error_mu_;
  std::string error_;
  std::thread thread_;  // Last: it starts once the rest is set.
};

// "went over its device-memory quota of 40960 MiB (it held 41000 MiB) and
// anvil killed it": what a watch that passed says after its subject.
std::string OverDeviceMemoryQuota(std::uint64_t quota_bytes, std::uint64_t peak_bytes);

}  // namespace anvil
