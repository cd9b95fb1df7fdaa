// A fixed number of places for one kind of a batch's work: compiles on the
// node's CPUs (`--compile-jobs`), candidate runs on one device (`--jobs`),
// candidates queued on it for their timed calls (as many as runs). A
// batch runs more evaluations than it has run slots, so the CPU compiles later
// candidates while the device runs earlier ones (issue 5). Thread-safe.
#pragma once

#include <condition_variable>
#include <mutex>

namespace anvil {

class Slots {
 public:
  explicit Slots(int count) : count_(count), free_(count) {}
  Slots(const Slots&) = delete;
  Slots& operator=(const Slots&) = delete;

  // Waits for a free slot and takes it; returns the seconds it waited.
  double Acquire();
  // Takes a free slot if there is one, without waiting.
  bool TryAcquire();
  void Release();
  int count() const { return count_; }
  // How many are taken now (a gauge for the reward service's /metrics).
  int InUse();

 private:
  const int count_;
  std::mutex mu_;
  std::condition_variable cv_;
  int free_;
};

// Holds one slot for a scope.
class SlotHold {
 public:
  explicit SlotHold(Slots& slots) : slots_(slots), waited_(slots_.Acquire()) {}
  ~SlotHold() { slots_.Release(); }
  SlotHold(const SlotHold&) = delete;
  SlotHold& operator=(const SlotHold&) = delete;
  double waited() const { return waited_; }

 private:
  Slots& slots_;
  const double waited_;
};

}  // namespace anvil
