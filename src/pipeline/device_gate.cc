#include "pipeline/device_gate.h"

#include <chrono>

namespace anvil {

namespace {
double Since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}
}  // namespace

double DeviceGate::AcquireShared() {
  const auto start = std::chrono::steady_clock::now();
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return !exclusive_ && exclusive_waiting_ == 0; });
  ++shared_;
  return Since(start);
}

void DeviceGate::ReleaseShared() {
  std::lock_guard<std::mutex> lock(mu_);
  if (--shared_ == 0) cv_.notify_all();
}

double DeviceGate::AcquireExclusive() {
  const auto start = std::chrono::steady_clock::now();
  std::unique_lock<std::mutex> lock(mu_);
  ++exclusive_waiting_;
  cv_.wait(lock, [this] { return !exclusive_ && shared_ == 0; });
  --exclusive_waiting_;
  exclusive_ = true;
  return Since(start);
}

void DeviceGate::ReleaseExclusive() {
  std::lock_guard<std::mutex> lock(mu_);
  exclusive_ = false;
  cv_.notify_all();
}

}  // namespace anvil
