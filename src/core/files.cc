#include "core/files.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <system_error>
#include <vector>

namespace anvil {
namespace {

constexpr std::size_t kReadChunkBytes = 1 << 16;
constexpr mode_t kNewFileMode = 0644;  // Before the umask.
constexpr int kMaxTempNameAttempts = 100;
constexpr std::string_view kTempSuffixTemplate = "XXXXXX";
constexpr const char* kDefaultTempRoot = "/tmp";
constexpr const char* kMemoryScratchRoot = "/dev/shm";

// "<pid>-": whose folder it is, for SweepLeftFolders (core/left_folders.h).
std::string OwnerTag() { return std::to_string(::getpid()) + "-"; }

std::string ErrnoMessage(std::string_view what, const std::filesystem::path& path, int err) {
  return std::string(what) + " " + path.string() + ": " + std::strerror(err);
}

// Writes all of `data` to `fd`, retrying on EINTR and short writes.
bool WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

}  // namespace

Result<std::string> ReadFile(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::Error(ErrnoMessage("cannot open", path, errno));
  // Read straight into a buffer of the file's size (gigabyte tensors), growing
  // it only if the file grew meanwhile.
  struct stat st;
  std::size_t capacity = kReadChunkBytes;
  if (::fstat(fd, &st) == 0 && st.st_size > 0) capacity = static_cast<std::size_t>(st.st_size) + 1;
  std::string contents(capacity, '\0');
  std::size_t used = 0;
  while (true) {
    if (used == contents.size()) contents.resize(contents.size() * 2);
    const ssize_t n = ::read(fd, contents.data() + used, contents.size() - used);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      return Status::Error(ErrnoMessage("cannot read", path, err));
    }
    if (n == 0) break;
    used += static_cast<std::size_t>(n);
  }
  ::close(fd);
  contents.resize(used);
  return contents;
}

Status WriteFileAtomic(const std::filesystem::path& path, std::string_view data) {
  // O_CREAT|O_EXCL with a name unique to this process and call, rather than
  // mkstemp, so the file gets ordinary permissions through the umask without
  // touching the process-wide umask.
  static std::atomic<uint64_t> counter{0};
  std::string tmp_name;
  int fd = -1;
  for (int attempt = 0; attempt < kMaxTempNameAttempts && fd < 0; ++attempt) {
    tmp_name = path.string() + ".tmp." + std::to_string(::getpid()) + "." +
               std::to_string(counter.fetch_add(1, std::memory_order_relaxed));
    fd = ::open(tmp_name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, kNewFileMode);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) return Status::Error(ErrnoMessage("cannot create temporary file for", path, errno));
  const std::filesystem::path tmp_path(tmp_name);
  auto fail = [&](std::string_view what) {
    const int err = errno;
    ::close(fd);
    ::unlink(tmp_name.c_str());
    return Status::Error(ErrnoMessage(what, tmp_path, err));
  };
  if (!WriteAll(fd, data)) return fail("cannot write");
  if (::fsync(fd) != 0) return fail("cannot fsync");
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(tmp_name.c_str());
    return Status::Error(ErrnoMessage("cannot close", tmp_path, err));
  }
  if (::rename(tmp_name.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp_name.c_str());
    return Status::Error(ErrnoMessage("cannot rename temporary file to", path, err));
  }
  return Status::Ok();
}

Result<std::filesystem::path> MakeTempDir(std::string_view prefix) {
  if (prefix.find('/') != std::string_view::npos) {
    return Status::Error("temporary directory prefix must not contain '/': " + std::string(prefix));
  }
  const char* env_root = std::getenv("TMPDIR");
  const std::filesystem::path root = (env_root != nullptr && env_root[0] != '\0') ? env_root : kDefaultTempRoot;
  std::string name = (root / std::string(prefix)).string() + OwnerTag() + std::string(kTempSuffixTemplate);
  if (::mkdtemp(name.data()) == nullptr) {
    return Status::Error(ErrnoMessage("cannot create temporary directory", name, errno));
  }
  return std::filesystem::path(name);
}

Result<std::filesystem::path> MakeScratchDir(std::string_view prefix, std::uintmax_t bytes_needed) {
  if (prefix.find('/') != std::string_view::npos) {
    return Status::Error("scratch directory prefix must not contain '/': " + std::string(prefix));
  }
  std::filesystem::path root;
  if (const char* env = std::getenv("ANVIL_SCRATCH_DIR"); env != nullptr && env[0] != '\0') {
    root = env;
  } else if (FreeBytes(kMemoryScratchRoot) >= bytes_needed && ::access(kMemoryScratchRoot, W_OK) == 0) {
    root = kMemoryScratchRoot;
  } else {
    return MakeTempDir(prefix);
  }
  std::string name = (root / std::string(prefix)).string() + OwnerTag() + std::string(kTempSuffixTemplate);
  if (::mkdtemp(name.data()) == nullptr) {
    return Status::Error(ErrnoMessage("cannot create scratch directory", name, errno));
  }
  return std::filesystem::path(name);
}

std::uintmax_t FreeBytes(const std::filesystem::path& path) {
  struct statvfs fs;
  if (::statvfs(path.c_str(), &fs) != 0) return 0;
  return static_cast<std::uintmax_t>(fs.f_bavail) * fs.f_frsize;
}

namespace {

// The nearest folder at or above `path` that exists: where a folder not made
// yet (a new cache) would land. Empty when none does.
std::filesystem::path NearestExisting(std::filesystem::path path) {
  std::error_code ec;
  while (!path.empty() && !std::filesystem::exists(path, ec)) path = path.parent_path();
  return path;
}

}  // namespace

std::uintmax_t DiskBytes(const std::filesystem::path& path) {
  struct statvfs fs;
  if (::statvfs(NearestExisting(path).c_str(), &fs) != 0) return 0;
  return static_cast<std::uintmax_t>(fs.f_blocks) * fs.f_frsize;
}

std::uintmax_t FreeSpaceFloor(const std::filesystem::path& path) {
  struct statvfs fs;
  if (::statvfs(path.c_str(), &fs) != 0) return 0;
  const std::uintmax_t size = static_cast<std::uintmax_t>(fs.f_blocks) * fs.f_frsize;
  return std::min<std::uintmax_t>(std::uintmax_t{1} << 30, size / 10);
}

std::optional<std::string> BelowFreeSpaceFloor(const std::filesystem::path& path, std::string_view what) {
  const std::filesystem::path at = NearestExisting(path);
  if (at.empty()) return std::nullopt;
  struct statvfs fs;
  if (::statvfs(at.c_str(), &fs) != 0) return std::nullopt;
  const std::uintmax_t free = static_cast<std::uintmax_t>(fs.f_bavail) * fs.f_frsize;
  const std::uintmax_t floor = FreeSpaceFloor(at);
  if (free >= floor) return std::nullopt;
  return "the disk holding " + std::string(what) + " (" + path.string() + ") has " + std::to_string(free >> 20) +
         " MiB free, under anvil's floor of " + std::to_string(floor >> 20) +
         " MiB (the smaller of 1 GiB and 10 % of that disk): make room there (`anvil cache prune --max-size SIZE` "
         "for the cache, or another --cache-dir / TMPDIR) and judge this candidate again";
}

std::uintmax_t TreeBytes(const std::filesystem::path& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status status = fs::symlink_status(path, ec);
  if (fs::is_regular_file(status)) return fs::file_size(path, ec);
  if (!fs::is_directory(status)) return 0;
  std::uintmax_t total = 0;
  for (fs::recursive_directory_iterator it(path, fs::directory_options::skip_permission_denied, ec), end;
       !ec && it != end; it.increment(ec)) {
    std::error_code entry_ec;
    if (!fs::is_regular_file(it->symlink_status(entry_ec))) continue;
    const std::uintmax_t bytes = it->file_size(entry_ec);
    if (!entry_ec) total += bytes;
  }
  return total;
}

Status RemoveTree(const std::filesystem::path& path) {
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
  if (ec) return Status::Error("cannot remove " + path.string() + ": " + ec.message());
  return Status::Ok();
}

}  // namespace anvil
