// Folders left behind by anvil processes that were killed before they could
// remove them (SIGKILL, an out-of-memory kill, a lost machine): a run's
// trial data, memory-backed in /dev/shm for a large task, stays until
// someone removes it. Every anvil command sweeps them first.
//
// Only anvil's own transient folders are touched (anvil-eval-, -extract-,
// -prepare-, -expand-, -sandbox-probe-; never a bench's work folder or one
// kept with --keep-work), only when the process named in the folder's name
// (core/files.h: `<prefix><pid>-` and six random characters) is gone, and only when the folder has
// not changed for `min_age` (a guard for a /tmp shared across pid namespaces).
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <vector>

namespace anvil {

// The file --keep-work writes into a run's folder: the sweep leaves it alone.
inline constexpr char kKeptMarker[] = "KEPT";

struct SweptFolders {
  int folders = 0;
  std::uintmax_t bytes = 0;
};

// Removes the left folders under `roots` (default: $TMPDIR or /tmp, /dev/shm,
// $ANVIL_SCRATCH_DIR).
SweptFolders SweepLeftFolders(const std::vector<std::filesystem::path>& roots = {},
                              std::chrono::seconds min_age = std::chrono::minutes(10));

}  // namespace anvil
