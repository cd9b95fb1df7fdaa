#include "pipeline/slots.h"

#include <chrono>

namespace anvil {

double Slots::Acquire() {
  const auto start = std::chrono::steady_clock::now();
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return free_ > 0; });
  --free_;
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

bool Slots::TryAcquire() {
  std::lock_guard<std::mutex> lock(mu_);
  if (free_ == 0) return false;
  --free_;
  return true;
}

int Slots::InUse() {
  std::lock_guard<std::mutex> lock(mu_);
  return count_ - free_;
}

void Slots::Release() {
  std::lock_guard<std::mutex> lock(mu_);
  ++free_;
  cv_.notify_one();
}

}  // namespace anvil
