#include "pipeline/scratch_budget.h"

#include <algorithm>
#include <fstream>
#include <string>

#include "core/files.h"

namespace anvil {
namespace {

// MemAvailable from /proc/meminfo, in bytes; 0 when unknown.
std::uintmax_t AvailableMemory() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  std::uintmax_t kib = 0;
  std::string unit;
  while (meminfo >> key >> kib >> unit) {
    if (key == "MemAvailable:") return kib * 1024;
  }
  return 0;
}

}  // namespace

std::uintmax_t ScratchBudget::TryReserve(std::uintmax_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  if (bytes > limit_ - used_) return 0;
  used_ += bytes;
  return bytes;
}

ScratchBudget& ScratchBudget::Memory() {
  static ScratchBudget budget(std::min(AvailableMemory() / 2, FreeBytes("/dev/shm")));
  return budget;
}

std::uintmax_t ScratchBudget::Reserve(std::uintmax_t need, std::uintmax_t want) {
  if (need > limit_) return 0;
  want = std::clamp(want, need, limit_);
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return limit_ - used_ >= need; });
  const std::uintmax_t got = std::min(want, limit_ - used_);
  used_ += got;
  return got;
}

void ScratchBudget::Release(std::uintmax_t bytes) {
  if (bytes == 0) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    used_ -= std::min(bytes, used_);
  }
  cv_.notify_all();
}

}  // namespace anvil
