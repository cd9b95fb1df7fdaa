// Bounding anvil's cache (`anvil cache prune`): evicts entries (cache_scan.h)
// least recently used first, until the cache fits a size and/or every entry
// left was used within an age. Safe beside running anvil processes: an entry
// is removed only while this process holds its builders' or preparers' lock
// and, for a prepared task, the folder's own lock that evals hold while they
// use it (tasks/prepare.h), all taken without waiting; a held one is kept and
// reported. Removal renames the entry away first, so no one finds half of it.
// Only entries and leftovers of earlier prunes are removed; lock files only
// with their entry, while held. Links are never followed. Not covered: a
// built artifact between its build (or cache hit) and the run that loads it;
// it is then the most recently used entry, so only a size bound that evicts
// everything older reaches it.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "cache/cache_scan.h"
#include "core/status.h"

namespace anvil {

struct PruneOptions {
  // Evict until the whole cache holds at most this many bytes. Default: no bound.
  std::optional<std::uintmax_t> max_bytes;
  // Evict entries not used for longer than this. Default: no bound.
  std::optional<std::chrono::seconds> older_than;
  // Evict until at least this many bytes are gone (room wanted on the disk).
  std::uintmax_t min_removed_bytes = 0;
  // Keep entries used more recently than this whatever the bounds say (an
  // automatic prune: a build between its compile and its run). Default: none.
  std::optional<std::chrono::seconds> keep_newer_than;
  bool dry_run = false;  // Remove nothing; report what would go.
  // The time ages are measured from. Default: the file clock's now.
  std::optional<std::filesystem::file_time_type> now;
};

struct PruneResult {
  std::vector<CacheEntry> removed;    // Least recently used first (dry run: would be).
  std::vector<CacheEntry> in_use;     // Due to go, but another process holds it: kept.
  std::vector<std::string> failures;  // Due to go, but could not be removed: why.
  std::vector<CacheEntry> leftovers;  // Of killed prunes, removed (dry run: would be).
  std::uintmax_t bytes_before = 0;    // The whole cache.
  std::uintmax_t bytes_after = 0;

  std::uintmax_t RemovedBytes() const;
};

// Error when `root` is not a folder or no bound is set.
Result<PruneResult> PruneCache(const std::filesystem::path& root, const PruneOptions& options);

}  // namespace anvil
