#include "pipeline/device_gate.h"

namespace anvil {

void DeviceGate::AcquireShared() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return !exclusive_ && exclusive_waiting_ == 0; });
  ++shared_;
}

void DeviceGate::ReleaseShared() {
  std::lock_guard<std::mutex> lock(mu_);
  if (--shared_ == 0) cv_.notify_all();
}

void DeviceGate::AcquireExclusive() {
  std::unique_lock<std::mutex> lock(mu_);
  ++exclusive_waiting_;
  cv_.wait(lock, [this] { return !exclusive_ && shared_ == 0; });
  --exclusive_waiting_;
  exclusive_ = true;
}

void DeviceGate::ReleaseExclusive() {
  std::lock_guard<std::mutex> lock(mu_);
  exclusive_ = false;
  cv_.notify_all();
}

}  // namespace anvil
