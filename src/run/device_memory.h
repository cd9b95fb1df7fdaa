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
#include <set>
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
// `quota_bytes`, calls `over` once, on its own thread (kill them there). It
// also keeps what the other processes on the device held, but for `planned`
// (anvil's own, whose device memory is budgeted: the task server; pid ->
// budget) only what they held beyond their budget (0: no budget, never
// counted): a device that ran out of memory while others held some of it
// failed the job by their doing, not the job's (issue 38, item 3).
class DeviceMemoryWatch {
 public:
  DeviceMemoryWatch(std::shared_ptr<DeviceMemoryReader> reader, std::uint64_t quota_bytes,
                    std::function<std::vector<pid_t>()> pids, std::function<void()> over,
                    std::map<pid_t, std::uint64_t> planned = {},
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
  // The most the other processes held together at one look, and who they
  // were then ("" if none held any).
  std::uint64_t others_peak_bytes() const { return others_peak_.load(); }
  std::string others() const;
  // Why a look failed ("" if none failed): the watch stops at the first.
  std::string error() const;

 private:
  void Loop();

  std::shared_ptr<DeviceMemoryReader> reader_;
  std::uint64_t quota_;
  std::function<std::vector<pid_t>()> pids_;
  std::function<void()> on_over_;
  const std::map<pid_t, std::uint64_t> planned_;
  std::chrono::milliseconds every_;
  std::mutex stop_mu_;
  std::condition_variable stop_cv_;  // Wakes the watch between looks when it is stopped.
  std::atomic<bool> stop_{false};
  std::atomic<bool> over_{false};
  std::atomic<std::uint64_t> peak_{0};
  std::atomic<std::uint64_t> others_peak_{0};
  mutable std::mutex error_mu_;  // Guards error_ and others_.
  std::string error_;
  std::string others_;
  std::thread thread_;  // Last: it starts once the rest is set.
};

// "went over its device-memory quota of 40960 MiB (it held 41000 MiB) and
// anvil killed it": what a watch that passed says after its subject.
std::string OverDeviceMemoryQuota(std::uint64_t quota_bytes, std::uint64_t peak_bytes);

// anvil's own processes whose device memory is budgeted (the task server,
// tasks/task_server.h, says so at its start and end, with its budget; 0: none
// said): never "another process" to a wait, nor to a watch within their
// budget. This process is always one, without a budget.
void PlanDeviceProcess(pid_t pid, bool planned = true, std::uint64_t budget_bytes = 0);
std::vector<pid_t> PlannedDeviceProcesses();
std::map<pid_t, std::uint64_t> PlannedDeviceBudgets();

// Whether a failed run's words say the device ran out of memory (torch's
// OutOfMemoryError, the runtime's and the driver's codes, cuBLAS's).
// Printed by the candidate's process, so never a verdict's sole ground: with
// others' device memory seen by the driver (above) it makes the failure the
// machine's, retried alone, where it recurs with no other process (its own).
bool SaysDeviceOutOfMemory(const std::string& text);

// "pid 4242 (python3) held 70000 MiB": the processes of `used` not in
// `ours`, and those of `budgeted` (pid -> budget, 0: none) beyond their
// budget ("pid 50 held 11264 MiB, 3072 MiB beyond its budget"), biggest
// first, at most `most` named; "" if none holds any.
std::string OtherHolders(const std::map<pid_t, std::uint64_t>& used, const std::vector<pid_t>& ours,
                         std::size_t most = 3, const std::map<pid_t, std::uint64_t>& budgeted = {});

// Waits until no process but `ours` holds device memory, looking every
// `every`, for at most `wait`: Ok once the device is idle, else an error
// naming who held it at the last look (or why the driver could not say).
Status WaitForIdleDevice(DeviceMemoryReader& reader, const std::vector<pid_t>& ours, std::chrono::milliseconds wait,
                         std::chrono::milliseconds every = std::chrono::milliseconds(200));

}  // namespace anvil
