// Small file-system helpers that report failure as Status/Result instead of
// throwing, so callers at module boundaries never see a filesystem_error.
// All functions are stateless and thread-safe (concurrent writers to the same
// path race at the rename, last one wins; readers never see a partial file).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"

namespace anvil {

// The whole file's bytes. Error when it cannot be opened or read.
Result<std::string> ReadFile(const std::filesystem::path& path);

// Writes `data` to a temporary file beside `path`, flushes it and renames it
// over `path`, so readers see the old or the new contents, never a mix.
// The parent directory must exist. On error the temporary file is removed.
Status WriteFileAtomic(const std::filesystem::path& path, std::string_view data);

// Creates a fresh private (0700) directory named `<prefix><pid>-` and six random characters (mkdtemp) under
// $TMPDIR, or /tmp when $TMPDIR is unset or empty. The caller owns it and
// removes it (RemoveTree); a process killed first leaves it to the next
// anvil (core/left_folders.h). `prefix` must not contain '/'.
Result<std::filesystem::path> MakeTempDir(std::string_view prefix);

// Like MakeTempDir, for scratch data of about `bytes_needed` bytes (trial
// tensors of a large task): under $ANVIL_SCRATCH_DIR when set; else in
// /dev/shm (memory-backed) when it has that much room free, so gigabytes of
// tensors are not written through to a disk; else as MakeTempDir.
Result<std::filesystem::path> MakeScratchDir(std::string_view prefix, std::uintmax_t bytes_needed);

// Bytes available to this user on the filesystem holding `path`; 0 on error.
std::uintmax_t FreeBytes(const std::filesystem::path& path);
// The size of the filesystem that holds `path`, or would hold it (the nearest
// folder above it that exists); 0 on error.
std::uintmax_t DiskBytes(const std::filesystem::path& path);

// anvil's free-space floor on the filesystem holding `path`: the smaller of
// 1 GiB and 10 % of that filesystem (0 when it cannot be read).
std::uintmax_t FreeSpaceFloor(const std::filesystem::path& path);
// Why no job should start writing under `path` (`what` names it: "the
// cache"): its filesystem has less free than its floor. nullopt: room enough,
// or `path` cannot be read (the job's own writes will say).
std::optional<std::string> BelowFreeSpaceFloor(const std::filesystem::path& path, std::string_view what);

// Apparent size of the regular files at or below `path` (a file: its size);
// links are not followed; what cannot be read counts 0.
std::uintmax_t TreeBytes(const std::filesystem::path& path);

// Removes `path` and everything below it. A missing path is not an error.
Status RemoveTree(const std::filesystem::path& path);

}  // namespace anvil
