// Where anvil finds its parts at run time: its source tree (Python workers,
// examples), the project venv's Python, and the cache directory. Values come
// from environment variables first, then compile-time defaults. Thread-safe
// (read-only after the first call).
#pragma once

#include <filesystem>
#include <string>

namespace anvil {

// ANVIL_SOURCE_DIR, else the source tree anvil was built from.
std::filesystem::path SourceDir();
// ANVIL_PYTHON, else <source>/.venv/bin/python, else "python3".
std::string PythonExecutable();
// <source>/python: put on PYTHONPATH for the workers.
std::filesystem::path PythonPackageDir();
// ANVIL_CACHE_DIR, else $XDG_CACHE_HOME/anvil, else ~/.cache/anvil.
std::filesystem::path DefaultCacheDir();

}  // namespace anvil
