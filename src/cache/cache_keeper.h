// Keeps anvil's cache inside its bound without anyone asking (the disk is a
// budget): at most `max_bytes` in all, and the disk holding it above anvil's
// free-space floor (core/files.h FreeSpaceFloor), by evicting least recently
// used entries under the locks `anvil cache prune` takes (cache_prune.h).
// Entries used within `keep_recent` stay whatever the bound says: a build
// between its compile and the run that loads it, a task being judged.
//
// Routine checks (Tick) run at most every `every`, on a thread of their own
// that no evaluation waits for; a disk found below its floor is an urgent
// check (KeepNow), made on the caller's thread before anything is written.
// What a check evicts is said on stderr. Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <future>
#include <memory>
#include <mutex>
#include <optional>

#include "cache/cache_prune.h"

namespace anvil {

struct CacheBound {
  std::optional<std::uintmax_t> max_bytes;  // The whole cache; none: no size bound.
  bool floor = true;                        // Keep its disk above the free-space floor.
  std::chrono::seconds keep_recent{600};
  std::chrono::seconds every{60};
};

// The default size bound: half the filesystem that holds `root` (or would:
// the nearest folder that exists).
std::uintmax_t DefaultCacheMaxBytes(const std::filesystem::path& root);

class CacheKeeper {
 public:
  CacheKeeper(std::filesystem::path root, CacheBound bound);
  // The process's keeper of `root`, made with `bound` by its first caller
  // and shared by the evaluators judging into that cache (one per GPU, one
  // per policy): one routine check a minute, not one each.
  static std::shared_ptr<CacheKeeper> Shared(const std::filesystem::path& root, const CacheBound& bound);
  // Waits for a routine check under way.
  ~CacheKeeper();
  CacheKeeper(const CacheKeeper&) = delete;
  CacheKeeper& operator=(const CacheKeeper&) = delete;

  // Starts a routine check if none ran for `every` and none is under way.
  void Tick();
  // A check now, on this thread (after one under way). Returns what it evicted.
  PruneResult KeepNow();

  const CacheBound& bound() const { return bound_; }

 private:
  PruneResult Check();

  const std::filesystem::path root_;
  const CacheBound bound_;
  std::mutex check_mu_;  // One check at a time.
  std::mutex tick_mu_;
  std::chrono::steady_clock::time_point last_tick_{};
  std::future<void> routine_;
};

}  // namespace anvil
