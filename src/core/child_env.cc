#include "core/child_env.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <iterator>
#include <map>

extern char** environ;

namespace anvil {
namespace {

// What a child may need from anvil's environment, by exact name.
constexpr std::string_view kNames[] = {
    // The process's basics: where programs are, whose they are, language and time.
    "PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TZ", "TMPDIR", "XDG_CACHE_HOME",
    // Toolchains: the loader, the compilers and their search paths.
    "LD_LIBRARY_PATH", "LIBRARY_PATH", "CPATH", "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH", "PKG_CONFIG_PATH", "CC", "CXX",
    "CUDACXX", "CUDAHOSTCXX", "MAX_JOBS",
    // Python: the interpreter's home and the venv.
    "PYTHONHOME", "PYTHONNOUSERSITE", "VIRTUAL_ENV",
    // Sanitizer runtimes of a sanitizer build.
    "ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS", "TSAN_OPTIONS"};

// ... and by prefix: locale categories, the device runtimes and their
// compilers, thread pools and math libraries, torch and its compilers, and
// anvil's own switches.
constexpr std::string_view kPrefixes[] = {
    "LC_",  "CUDA_",     "NVCC_",  "NVIDIA_",  "MUSA_",          "OMP_",    "KMP_",   "GOMP_",
    "MKL_", "OPENBLAS_", "TORCH_", "PYTORCH_", "TORCHINDUCTOR_", "TRITON_", "ANVIL_", "NCCL_"};

// A name holding one of these is a secret's, whatever its prefix
// (ANVIL_OPENAI_API_KEY, TORCH_HUB_TOKEN), or may hold one (a URL's userinfo
// or query string: ANVIL_OPENAI_BASE_URL).
constexpr std::string_view kSecretWords[] = {"KEY",        "TOKEN", "SECRET", "PASSWORD", "PASSWD",
                                             "CREDENTIAL", "AUTH",  "COOKIE", "PRIVATE",  "URL"};

bool HoldsSecretWord(std::string_view name) {
  std::string upper(name);
  std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return std::toupper(c); });
  return std::any_of(std::begin(kSecretWords), std::end(kSecretWords),
                     [&](std::string_view word) { return upper.find(word) != std::string::npos; });
}

}  // namespace

bool ChildMayInherit(std::string_view name) {
  if (name.empty() || HoldsSecretWord(name)) return false;
  if (std::find(std::begin(kNames), std::end(kNames), name) != std::end(kNames)) return true;
  return std::any_of(std::begin(kPrefixes), std::end(kPrefixes),
                     [&](std::string_view prefix) { return name.size() > prefix.size() && name.starts_with(prefix); });
}

EnvPairs ChildEnvironment(const EnvPairs& added) {
  std::map<std::string, std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const char* eq = std::strchr(*e, '=');
    if (eq == nullptr) continue;
    std::string name(*e, static_cast<std::size_t>(eq - *e));
    if (ChildMayInherit(name)) env[std::move(name)] = eq + 1;
  }
  for (const auto& [name, value] : added) env[name] = value;
  return EnvPairs(env.begin(), env.end());
}

std::vector<std::string> EnvStrings(const EnvPairs& env) {
  std::vector<std::string> out;
  out.reserve(env.size());
  for (const auto& [name, value] : env) out.push_back(name + "=" + value);
  return out;
}

}  // namespace anvil
