// A task is a PyTorch reference in KernelBench format (class Model,
// get_inputs, get_init_inputs), given as one file or found in a tree. This
// header loads task files and their optional sidecar (`<stem>.anvil.json`:
// level, per-dtype tolerance, held-out input sets). Plain values; thread-safe.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "core/status.h"

namespace anvil {

struct ToleranceOverride {
  std::string dtype;  // "float32", "float16", ...
  double atol = 0;
  double rtol = 0;
};

struct Task {
  std::filesystem::path path;                 // Absolute.
  std::string name;                           // File stem, e.g. "19_ReLU".
  std::string source;                         // The file's text.
  std::string sha256;                         // Of `source` (and the sidecar, when present).
  int level = 0;                              // Sidecar "level", else a `levelN` parent folder, else 0.
  std::vector<ToleranceOverride> tolerances;  // From the sidecar.
  // Sidecar "held_out" (catalog C1): a JSON array of objects, each naming
  // module globals of the task to change (`{"batch_size": 5}`) for an extra
  // correctness trial on shapes the benchmark does not show; "" when none.
  // kernelbench-format candidates must be right on them too. `"auto"` (a
  // JSON string, from `--held-out auto`): one set with batch_size one
  // smaller, where the reference takes it.
  std::string held_out_json;
};

// Reads one task file. Error when it is missing, not a .py file, or its
// sidecar is malformed. The Python itself is checked later, by prepare.
Result<Task> LoadTask(const std::filesystem::path& file);

// A file gives one task; a directory gives every .py file below it (sorted,
// skipping __init__.py and hidden folders). Error when nothing is found.
Result<std::vector<Task>> DiscoverTasks(const std::filesystem::path& file_or_dir);

}  // namespace anvil
