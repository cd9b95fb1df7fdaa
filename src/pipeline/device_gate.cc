#include "pipeline/device_gate.h"

namespace anvil {

namespace {
double Since(DeviceGate::Clock::time_point t) {
  return std::chrono::duration<double>(DeviceGate::Clock::now() - t).count();
}

// How often a shared user waiting behind a timed run looks again: a long hold
// becomes long by time passing, which nothing signals.
constexpr std::chrono::milliseconds kRecheck{200};
}  // namespace

bool DeviceGate::SharedMayEnter(Clock::time_point now) const {
  if (exclusive_) return false;
  if (exclusive_waiting_.empty()) return true;
  if (shared_.empty()) return false;
  const Clock::time_point oldest = *shared_.begin();
  return oldest < *exclusive_waiting_.begin() && now - oldest >= kLongHold;
}

DeviceGate::Shared DeviceGate::AcquireShared() {
  const auto start = Clock::now();
  std::unique_lock<std::mutex> lock(mu_);
  while (!SharedMayEnter(Clock::now())) {
    if (exclusive_waiting_.empty() || shared_.empty()) {
      cv_.wait(lock);  // Only a release or a new waiter changes anything.
    } else {
      cv_.wait_for(lock, kRecheck);
    }
  }
  Shared hold{Clock::now(), 0};
  hold.waited = Since(start);
  shared_.insert(hold.since);
  return hold;
}

void DeviceGate::ReleaseShared(const Shared& hold) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = shared_.find(hold.since);
  if (it != shared_.end()) shared_.erase(it);
  cv_.notify_all();
}

double DeviceGate::AcquireExclusive() {
  const auto start = Clock::now();
  std::unique_lock<std::mutex> lock(mu_);
  auto me = exclusive_waiting_.insert(start);
  cv_.notify_all();  // Shared users waiting on nothing in particular look at the new order.
  cv_.wait(lock, [this] { return !exclusive_ && shared_.empty(); });
  exclusive_waiting_.erase(me);
  exclusive_ = true;
  return Since(start);
}

void DeviceGate::ReleaseExclusive() {
  std::lock_guard<std::mutex> lock(mu_);
  exclusive_ = false;
  cv_.notify_all();
}

}  // namespace anvil
