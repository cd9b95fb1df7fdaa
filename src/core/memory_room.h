// Room in the task server's device-memory budget (issue 38: "trials of tasks
// that do not fit the device budget at once run one after another"). A
// session or a baseline reserves what it will hold in the server before it
// takes the device and keeps it until it ends; those that fit together run
// side by side, the others wait. The device gate alone does not bound it: a
// session between its trials and its timed calls holds its trials in the
// server while another candidate has the device alone (the H100's 80 GB ran
// out so, bench/results/throughput_h100_multigb.md).
//
// Asked in order: a reservation that does not fit waits, and those asked
// after it wait behind it (a large one is not starved by small ones). One
// larger than the whole budget waits for the room to empty, then runs alone.
// Thread-safe.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>

namespace anvil {

class MemoryRoom {
 public:
  explicit MemoryRoom(int64_t budget) : budget_(budget) {}
  MemoryRoom(const MemoryRoom&) = delete;
  MemoryRoom& operator=(const MemoryRoom&) = delete;

  // Waits for `bytes` of room, in the order asked, and takes it; returns the
  // seconds it waited.
  double Reserve(int64_t bytes);
  void Release(int64_t bytes);
  int64_t reserved();

 private:
  const int64_t budget_;
  std::mutex mu_;
  std::condition_variable cv_;
  int64_t reserved_ = 0;
  int holders_ = 0;
  uint64_t next_ticket_ = 0;  // The next one asking gets this one.
  uint64_t serving_ = 0;      // The ticket whose turn it is.
};

// Room held for a scope (none: a default one, or a null room).
class RoomHold {
 public:
  RoomHold() = default;
  RoomHold(std::shared_ptr<MemoryRoom> room, int64_t bytes);
  ~RoomHold() { Reset(); }
  RoomHold(RoomHold&& other) noexcept { *this = std::move(other); }
  RoomHold& operator=(RoomHold&& other) noexcept;
  RoomHold(const RoomHold&) = delete;
  RoomHold& operator=(const RoomHold&) = delete;
  void Reset();
  double waited() const { return waited_; }

 private:
  std::shared_ptr<MemoryRoom> room_;
  int64_t bytes_ = 0;
  double waited_ = 0;
};

}  // namespace anvil
