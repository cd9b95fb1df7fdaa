// Who may use the device while candidates are evaluated side by side
// (`--jobs N`): correctness runs, trial making and task preparation share it;
// timed runs (a candidate's timed calls, the baselines) get it alone, so no
// other process's kernels or CPU load land inside their times. A timed run
// waiting for the device goes before new shared users (timed runs do not
// starve). Unlike std::shared_mutex, a hold may be released by another
// thread than the one that took it (a candidate's timed calls are allowed on
// its clock's thread and end on its evaluation's). Thread-safe.
#pragma once

#include <condition_variable>
#include <mutex>

namespace anvil {

class DeviceGate {
 public:
  // Each returns the seconds it waited.
  double AcquireShared();
  void ReleaseShared();
  double AcquireExclusive();
  void ReleaseExclusive();

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int shared_ = 0;
  int exclusive_waiting_ = 0;
  bool exclusive_ = false;
};

// Holds the device shared for a scope.
class SharedDeviceHold {
 public:
  explicit SharedDeviceHold(DeviceGate& gate) : gate_(gate), waited_(gate_.AcquireShared()) {}
  ~SharedDeviceHold() { gate_.ReleaseShared(); }
  SharedDeviceHold(const SharedDeviceHold&) = delete;
  SharedDeviceHold& operator=(const SharedDeviceHold&) = delete;
  double waited() const { return waited_; }

 private:
  DeviceGate& gate_;
  const double waited_;
};

// Holds the device alone for a scope.
class ExclusiveDeviceHold {
 public:
  explicit ExclusiveDeviceHold(DeviceGate& gate) : gate_(gate), waited_(gate_.AcquireExclusive()) {}
  ~ExclusiveDeviceHold() { gate_.ReleaseExclusive(); }
  ExclusiveDeviceHold(const ExclusiveDeviceHold&) = delete;
  ExclusiveDeviceHold& operator=(const ExclusiveDeviceHold&) = delete;
  double waited() const { return waited_; }

 private:
  DeviceGate& gate_;
  const double waited_;
};

}  // namespace anvil
