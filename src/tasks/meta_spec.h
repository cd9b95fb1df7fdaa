// A task's spec without its tensors (python/anvil_py/task_spec.py): shapes,
// dtypes, strides, hyper-parameters and the per-op shape trace, derived on
// the meta device, so it costs a torch import, not the task's gigabytes. For
// prompts, which need it before any trial exists. Cached per task content
// under the cache folder. Thread-safe (separate tasks; one worker per call).
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "core/status.h"
#include "tasks/task.h"

namespace anvil {

struct MetaSpec {
  std::string json;   // The spec (docs/spec.md) as JSON text; "" when it could not be derived.
  std::string error;  // Why not (a reference that needs values: `.item()`, data-dependent shapes).
};

// The specs of `tasks`, by Task::sha256: from the cache, else from one worker
// run over all that are missing. Error only when the worker cannot run (the
// venv's Python, a deadline of a minute plus a few seconds per task).
Result<std::map<std::string, MetaSpec>> MetaSpecs(const std::vector<Task>& tasks,
                                                  const std::filesystem::path& cache_dir);

}  // namespace anvil
