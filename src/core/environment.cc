#include "core/environment.h"

#include <cstdlib>

namespace anvil {
namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::string(v) : std::string();
}

}  // namespace

std::filesystem::path SourceDir() {
  std::string v = Env("ANVIL_SOURCE_DIR");
  return v.empty() ? std::filesystem::path(ANVIL_SOURCE_DIR) : std::filesystem::path(v);
}

std::string PythonExecutable() {
  std::string v = Env("ANVIL_PYTHON");
  if (!v.empty()) return v;
  std::filesystem::path venv = SourceDir() / ".venv" / "bin" / "python";
  std::error_code ec;
  if (std::filesystem::exists(venv, ec)) return venv.string();
  return "python3";
}

std::filesystem::path PythonPackageDir() { return SourceDir() / "python"; }

std::filesystem::path DefaultCacheDir() {
  std::string v = Env("ANVIL_CACHE_DIR");
  if (!v.empty()) return v;
  v = Env("XDG_CACHE_HOME");
  if (!v.empty()) return std::filesystem::path(v) / "anvil";
  v = Env("HOME");
  return std::filesystem::path(v.empty() ? "/tmp" : v) / ".cache" / "anvil";
}

}  // namespace anvil
