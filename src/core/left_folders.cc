#include "core/left_folders.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <ctime>
#include <string>

#include "core/files.h"

namespace anvil {
namespace fs = std::filesystem;
namespace {

constexpr const char* kTransientPrefixes[] = {"anvil-eval-",   "anvil-extract-",       "anvil-prepare-",
                                              "anvil-expand-", "anvil-sandbox-probe-", "anvil-build-"};

// The pid in `<prefix><pid>-` + six random characters, or 0.
pid_t OwnerPid(const std::string& name) {
  for (const char* prefix : kTransientPrefixes) {
    const std::string p = prefix;
    if (name.rfind(p, 0) != 0) continue;
    const std::size_t dash = name.find('-', p.size());
    if (dash == std::string::npos || dash == p.size() || name.size() - dash - 1 != 6) return 0;
    pid_t pid = 0;
    for (std::size_t i = p.size(); i < dash; ++i) {
      if (name[i] < '0' || name[i] > '9' || pid > 100000000) return 0;
      pid = pid * 10 + (name[i] - '0');
    }
    return pid;
  }
  return 0;
}

bool Alive(pid_t pid) { return ::kill(pid, 0) == 0 || errno == EPERM; }

std::vector<fs::path> DefaultRoots() {
  std::vector<fs::path> roots;
  const char* tmp = std::getenv("TMPDIR");
  roots.emplace_back(tmp != nullptr && tmp[0] != '\0' ? tmp : "/tmp");
  roots.emplace_back("/dev/shm");
  if (const char* scratch = std::getenv("ANVIL_SCRATCH_DIR"); scratch != nullptr && scratch[0] != '\0') {
    roots.emplace_back(scratch);
  }
  return roots;
}

}  // namespace

SweptFolders SweepLeftFolders(const std::vector<fs::path>& roots, std::chrono::seconds min_age) {
  SweptFolders swept;
  const uid_t me = ::getuid();
  const std::time_t now = std::time(nullptr);
  for (const auto& root : roots.empty() ? DefaultRoots() : roots) {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(root, ec)) {
      const std::string name = entry.path().filename().string();
      const pid_t pid = OwnerPid(name);
      if (pid <= 0 || pid == ::getpid() || Alive(pid)) continue;
      struct stat st;
      if (::lstat(entry.path().c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != me) continue;
      if (now - st.st_mtime < min_age.count()) continue;
      if (fs::exists(entry.path() / kKeptMarker, ec)) continue;
      const std::uintmax_t bytes = TreeBytes(entry.path());
      if (RemoveTree(entry.path()).ok()) {
        ++swept.folders;
        swept.bytes += bytes;
      }
    }
  }
  return swept;
}

}  // namespace anvil
