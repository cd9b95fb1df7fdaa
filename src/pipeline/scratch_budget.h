// Memory-backed scratch shared by evaluations side by side (`--jobs`): a
// streamed task's trials (gigabytes each) are made in /dev/shm, which is RAM.
// Each evaluation used to look at the free space alone, so six of them at once
// each saw room for all their trials and together filled the machine's memory
// (an H200 node with 128 GiB was OOM-killed at 120 GB of /dev/shm). The budget
// hands out bytes of one process-wide limit: half the memory available and
// no more than /dev/shm holds, measured when first used. Thread-safe.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace anvil {

class ScratchBudget {
 public:
  explicit ScratchBudget(std::uintmax_t limit) : limit_(limit) {}
  // The process-wide one, for /dev/shm.
  static ScratchBudget& Memory();

  // Takes as much as is free up to `want`, but at least `need`, waiting while
  // less than `need` is free; 0 when `need` exceeds the whole limit (use the
  // disk). Give the result back with Release.
  std::uintmax_t Reserve(std::uintmax_t need, std::uintmax_t want);
  // Takes `bytes` if they are free now, else nothing (0); never waits.
  std::uintmax_t TryReserve(std::uintmax_t bytes);
  void Release(std::uintmax_t bytes);
  std::uintmax_t limit() const { return limit_; }

 private:
  const std::uintmax_t limit_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::uintmax_t used_ = 0;  // Guarded by mu_.
};

// Holds a reservation for a scope.
class ScratchReservation {
 public:
  ScratchReservation(ScratchBudget& budget, std::uintmax_t need, std::uintmax_t want)
      : budget_(budget), bytes_(budget.Reserve(need, want)) {}
  // TryReserve's.
  ScratchReservation(ScratchBudget& budget, std::uintmax_t bytes) : budget_(budget), bytes_(budget.TryReserve(bytes)) {}
  ~ScratchReservation() { budget_.Release(bytes_); }
  ScratchReservation(const ScratchReservation&) = delete;
  ScratchReservation& operator=(const ScratchReservation&) = delete;
  std::uintmax_t bytes() const { return bytes_; }

 private:
  ScratchBudget& budget_;
  const std::uintmax_t bytes_;
};

}  // namespace anvil
