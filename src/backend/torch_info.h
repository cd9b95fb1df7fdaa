// What the project venv's torch needs to build an extension the way
// torch.utils.cpp_extension would: include and library paths, flags, the
// torch version. Read once from `anvil_py.task_worker build-info` and cached
// on disk per (python, torch installation). Plain value; thread-safe.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "core/status.h"

namespace anvil {

struct TorchInfo {
  std::string torch_version;  // e.g. "2.11.0+cu130"
  std::string python_include;
  std::string ext_suffix;  // ".cpython-311-x86_64-linux-gnu.so"
  std::vector<std::string> include_paths_cpu, include_paths_cuda;
  std::string torch_lib;
  std::vector<std::string> cflags, nvcc_flags, ldflags_cpu, ldflags_cuda;
  // Folders the interpreter imports from (prefixes, site-packages, PYTHONPATH).
  std::vector<std::string> python_paths;
};

// Runs the probe (about 3 s: it imports torch) unless a cached answer for the
// same interpreter and torch installation exists under `cache_dir`.
Result<TorchInfo> LoadTorchInfo(const std::filesystem::path& cache_dir);

}  // namespace anvil
