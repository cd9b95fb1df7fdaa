#include "cache/cache_prune.h"

#include <unistd.h>

#include <algorithm>
#include <optional>

#include "core/file_lock.h"
#include "core/files.h"

namespace anvil {
namespace fs = std::filesystem;
namespace {

enum class Removal { kRemoved, kInUse, kFailed };

// Moves `path` out of its name, then removes it: a prune killed midway leaves
// a leftover (cache_scan.h), never a half entry that looks whole.
Status Discard(const fs::path& path) {
  std::error_code ec;
  if (!fs::is_directory(fs::symlink_status(path, ec))) {
    fs::remove(path, ec);
    return ec ? Status::Error("cannot remove " + path.string() + ": " + ec.message()) : Status::Ok();
  }
  const fs::path trash =
      path.parent_path() / (kPruningPrefix + std::to_string(getpid()) + "-" + path.filename().string());
  fs::rename(path, trash, ec);
  if (ec) return Status::Error("cannot move " + path.string() + " aside to remove it: " + ec.message());
  return RemoveTree(trash);
}

Removal RemoveEntry(const CacheEntry& entry, bool dry_run, std::string& failure) {
  std::error_code ec;
  // Without waiting: a builder or preparer holds this one. A dry run creates
  // no lock file (a missing one is held by no one).
  std::optional<FileLock> lock;
  if (!entry.lock.empty() && (!dry_run || fs::exists(entry.lock, ec))) {
    if (!dry_run) fs::create_directories(entry.lock.parent_path(), ec);
    lock.emplace(entry.lock, /*wait=*/false);
    if (!lock->held()) return Removal::kInUse;
  }
  // An eval holds its prepared task's folder (shared) while it runs.
  std::optional<FileLock> folder;
  if (entry.kind == CacheKind::kTask) {
    folder.emplace(entry.path, /*wait=*/false);
    if (!folder->held()) return Removal::kInUse;
  }
  if (dry_run) return Removal::kRemoved;
  if (Status removed = Discard(entry.path); !removed.ok()) {
    failure = removed.message();
    return Removal::kFailed;
  }
  // While held: whoever waits for it locks a fresh file (core/file_lock.h).
  if (lock) fs::remove(entry.lock, ec);
  return Removal::kRemoved;
}

}  // namespace

std::uintmax_t PruneResult::RemovedBytes() const {
  std::uintmax_t bytes = 0;
  for (const CacheEntry& entry : removed) bytes += entry.bytes;
  for (const CacheEntry& entry : leftovers) bytes += entry.bytes;
  return bytes;
}

Result<PruneResult> PruneCache(const fs::path& root, const PruneOptions& options) {
  if (!options.max_bytes && !options.older_than && options.min_removed_bytes == 0) {
    return Status::Error("nothing to prune by: set a size bound, an age bound or both");
  }
  auto contents = ScanCache(root);
  if (!contents.ok()) return contents.status();
  PruneResult result;
  std::uintmax_t total = contents.value().Total().bytes;
  result.bytes_before = total;
  for (const CacheEntry& leftover : contents.value().leftovers) {
    // Another prune may be removing it at the same time: either one finishes.
    if (!options.dry_run) (void)RemoveTree(leftover.path);
    result.leftovers.push_back(leftover);
    total -= std::min(total, leftover.bytes);
  }
  const fs::file_time_type now = options.now.value_or(fs::file_time_type::clock::now());
  std::uintmax_t removed = 0;
  for (const CacheEntry& entry : contents.value().entries) {
    const bool too_old = options.older_than && now - entry.last_used > *options.older_than;
    const bool too_big = (options.max_bytes && total > *options.max_bytes) || removed < options.min_removed_bytes;
    const bool recent = options.keep_newer_than && now - entry.last_used < *options.keep_newer_than;
    // Entries come least recently used first: the ones after this are newer still.
    if ((!too_old && !too_big) || recent) break;
    std::string failure;
    switch (RemoveEntry(entry, options.dry_run, failure)) {
      case Removal::kRemoved:
        result.removed.push_back(entry);
        total -= std::min(total, entry.bytes);
        removed += entry.bytes;
        break;
      case Removal::kInUse:
        result.in_use.push_back(entry);
        break;
      case Removal::kFailed:
        result.failures.push_back(failure);
        break;
    }
  }
  result.bytes_after = total;
  return result;
}

}  // namespace anvil
