#include "core/memory_room.h"

#include <algorithm>
#include <chrono>
#include <utility>

namespace anvil {

double MemoryRoom::Reserve(int64_t bytes) {
  bytes = std::max<int64_t>(bytes, 0);
  const auto start = std::chrono::steady_clock::now();
  std::unique_lock<std::mutex> lock(mu_);
  const uint64_t ticket = next_ticket_++;
  cv_.wait(lock, [&] { return ticket == serving_ && (holders_ == 0 || reserved_ + bytes <= budget_); });
  reserved_ += bytes;
  ++holders_;
  ++serving_;
  cv_.notify_all();  // The next in line may fit too.
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void MemoryRoom::Release(int64_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  reserved_ -= std::max<int64_t>(bytes, 0);
  --holders_;
  cv_.notify_all();
}

int64_t MemoryRoom::reserved() {
  std::lock_guard<std::mutex> lock(mu_);
  return reserved_;
}

RoomHold::RoomHold(std::shared_ptr<MemoryRoom> room, int64_t bytes) : room_(std::move(room)), bytes_(bytes) {
  if (room_) waited_ = room_->Reserve(bytes_);
}

RoomHold& RoomHold::operator=(RoomHold&& other) noexcept {
  if (this != &other) {
    Reset();
    room_ = std::move(other.room_);
    bytes_ = std::exchange(other.bytes_, 0);
    waited_ = other.waited_;
    other.room_.reset();
  }
  return *this;
}

void RoomHold::Reset() {
  if (room_) room_->Release(bytes_);
  room_.reset();
  bytes_ = 0;
}

}  // namespace anvil
