// Who may use the device while candidates are evaluated side by side
// (`--jobs N`): correctness runs, trial making and task preparation share it;
// timed runs (a candidate's timed calls, the baselines) get it alone, so no
// other process's kernels or CPU load land inside their times.
//
// A timed run waiting for the device goes before new shared users (timed runs
// do not starve), with one exception: while the device is held by a shared
// user that has held it for kLongHold or more and took it before the timed
// run began to wait (a task's preparation, a hanging candidate running to its
// deadline), new shared users pass. The timed run must wait for that holder
// anyway; the device would otherwise stand idle behind it (a hang held it for
// its whole 30 s deadline in run 11 of bench/results/throughput_h200.md).
//
// Unlike std::shared_mutex, a hold may be released by another thread than the
// one that took it (a candidate's timed calls are allowed on its clock's
// thread and end on its evaluation's). Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>

#include "pipeline/slots.h"

namespace anvil {

class DeviceGate {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::milliseconds kLongHold{3000};

  // A shared hold: when it began, and how long it waited.
  struct Shared {
    Clock::time_point since;
    double waited = 0;
  };

  Shared AcquireShared();
  void ReleaseShared(const Shared& hold);
  // Returns the seconds it waited.
  double AcquireExclusive();
  void ReleaseExclusive();
  // One task preparation at a time on a GPU (Evaluator::PrepareAsync): each
  // holds its trials' tensors on the device, GBs for KernelBench's level 1,
  // and a batch's compile lanes would start one per lane at once.
  Slots& preparations() { return preparations_; }

 private:
  // Whether a new shared user may take the device now.
  bool SharedMayEnter(Clock::time_point now) const;

  std::mutex mu_;
  std::condition_variable cv_;
  std::multiset<Clock::time_point> shared_;             // When each shared hold began.
  std::multiset<Clock::time_point> exclusive_waiting_;  // When each waiting timed run began to wait.
  bool exclusive_ = false;
  Slots preparations_{1};
};

// Holds the device shared for a scope.
class SharedDeviceHold {
 public:
  explicit SharedDeviceHold(DeviceGate& gate) : gate_(gate), hold_(gate_.AcquireShared()) {}
  ~SharedDeviceHold() { gate_.ReleaseShared(hold_); }
  SharedDeviceHold(const SharedDeviceHold&) = delete;
  SharedDeviceHold& operator=(const SharedDeviceHold&) = delete;
  double waited() const { return hold_.waited; }

 private:
  DeviceGate& gate_;
  const DeviceGate::Shared hold_;
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
