// What anvil's cache folder holds (core/environment.h DefaultCacheDir): the
// entries `anvil cache prune` may evict — build artifacts, the two precompiled
// torch headers, failed builds' logs, prepared tasks, kept verdicts
// (pipeline/verdict_cache.h) — each with its size and
// last use, and the rest (the torch and sandbox probes, lock files, builds in
// progress), which is only counted. Reads the file system only and never
// follows a symbolic link; the cache may change meanwhile (sizes are then
// approximate). Stateless and thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "core/status.h"

namespace anvil {

enum class CacheKind { kArtifact, kTorchPch, kHostPch, kFailedBuild, kTask, kVerdict, kOther };
inline constexpr std::size_t kCacheKinds = 7;

// "artifacts", "torch_pch", "host_pch", "failed_builds", "tasks", "verdicts", "other".
const char* CacheKindName(CacheKind kind);

struct CacheEntry {
  CacheKind kind = CacheKind::kOther;
  std::filesystem::path path;  // Its folder (a failed build: its log file).
  std::filesystem::path lock;  // What its builders or preparers hold (empty: none).
  std::uintmax_t bytes = 0;    // Its files' apparent size, as `du --apparent-size`.
  // The mtime of `path`: set when it is made and on each cache hit
  // (ArtifactCache::Lookup, PrepareTask).
  std::filesystem::file_time_type last_used;
};

struct CacheKindTotal {
  int count = 0;
  std::uintmax_t bytes = 0;
};

struct CacheContents {
  std::vector<CacheEntry> entries;  // Least recently used first.
  // Folders a killed `anvil cache prune` left half-removed (kind kOther):
  // nothing reads them, any prune removes them.
  std::vector<CacheEntry> leftovers;
  CacheKindTotal other;  // Everything else, leftovers included; never removed.

  // Counts and sizes by kind (indexed by CacheKind), and of everything.
  std::array<CacheKindTotal, kCacheKinds> ByKind() const;
  CacheKindTotal Total() const;
};

// Error when `root` is not a folder.
Result<CacheContents> ScanCache(const std::filesystem::path& root);

// The prefix of a folder being removed (renamed first, so that a prune killed
// midway never leaves a half entry under its own name).
inline constexpr char kPruningPrefix[] = ".pruning-";

}  // namespace anvil
