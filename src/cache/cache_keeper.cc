#include "cache/cache_keeper.h"

#include <cstdio>
#include <map>

#include "cache/byte_size.h"
#include "core/files.h"

namespace anvil {
namespace fs = std::filesystem;
std::uintmax_t DefaultCacheMaxBytes(const fs::path& root) { return DiskBytes(root) / 2; }

std::shared_ptr<CacheKeeper> CacheKeeper::Shared(const fs::path& root, const CacheBound& bound) {
  static std::mutex mu;
  static std::map<fs::path, std::weak_ptr<CacheKeeper>> keepers;
  std::lock_guard<std::mutex> lock(mu);
  std::weak_ptr<CacheKeeper>& slot = keepers[root];
  std::shared_ptr<CacheKeeper> keeper = slot.lock();
  if (!keeper) {
    keeper = std::make_shared<CacheKeeper>(root, bound);
    slot = keeper;
  }
  return keeper;
}

CacheKeeper::CacheKeeper(fs::path root, CacheBound bound) : root_(std::move(root)), bound_(bound) {}

CacheKeeper::~CacheKeeper() {
  std::lock_guard<std::mutex> lock(tick_mu_);
  if (routine_.valid()) routine_.wait();
}

void CacheKeeper::Tick() {
  std::lock_guard<std::mutex> lock(tick_mu_);
  const auto now = std::chrono::steady_clock::now();
  if (last_tick_ != std::chrono::steady_clock::time_point{} && now - last_tick_ < bound_.every) return;
  if (routine_.valid() && routine_.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return;
  last_tick_ = now;
  routine_ = std::async(std::launch::async, [this] { (void)Check(); });
}

PruneResult CacheKeeper::KeepNow() { return Check(); }

PruneResult CacheKeeper::Check() {
  std::lock_guard<std::mutex> lock(check_mu_);
  std::error_code ec;
  if (!fs::is_directory(root_, ec)) return {};
  PruneOptions options;
  options.max_bytes = bound_.max_bytes;
  options.keep_newer_than = bound_.keep_recent;
  std::uintmax_t free = 0, floor = 0;
  if (bound_.floor) {
    free = FreeBytes(root_);
    floor = FreeSpaceFloor(root_);
    // A quarter of the floor beyond it, so that the next write does not bring it back at once.
    const std::uintmax_t wanted = floor + floor / 4;
    if (free < wanted) options.min_removed_bytes = wanted - free;
  }
  if (!options.max_bytes && options.min_removed_bytes == 0) return {};
  auto pruned = PruneCache(root_, options);
  if (!pruned.ok()) {
    std::fprintf(stderr, "anvil: keeping the cache within its bound: %s\n", pruned.message().c_str());
    return {};
  }
  const PruneResult& r = pruned.value();
  if (!r.removed.empty() || !r.leftovers.empty()) {
    const std::string why =
        options.min_removed_bytes > 0
            ? "its disk had " + FormatBytes(free) + " free, under anvil's floor of " + FormatBytes(floor) +
                  " and a quarter"
            : "it held " + FormatBytes(r.bytes_before) + ", over its bound of " + FormatBytes(*options.max_bytes);
    std::fprintf(stderr,
                 "anvil: the cache %s: %s; evicted %zu entr%s, least recently used first (%s)%s (--cache-max-size "
                 "sets the bound)\n",
                 root_.c_str(), why.c_str(), r.removed.size(), r.removed.size() == 1 ? "y" : "ies",
                 FormatBytes(r.RemovedBytes()).c_str(), r.in_use.empty() ? "" : ", keeping those in use");
  }
  return r;
}

}  // namespace anvil
