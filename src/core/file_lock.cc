#include "core/file_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace anvil {
namespace {

int OpenForLock(const std::filesystem::path& path) {
  int fd = open(path.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0 && errno == EISDIR) fd = open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  return fd;
}

// Whether `fd` is still the file at `path`: its holder may have unlinked it
// while this process waited, and a lock on an unlinked file guards nothing.
bool StillAtPath(int fd, const std::filesystem::path& path) {
  struct stat locked, now;
  if (fstat(fd, &locked) != 0) return true;
  if (stat(path.c_str(), &now) != 0) return errno != ENOENT;
  return locked.st_dev == now.st_dev && locked.st_ino == now.st_ino;
}

}  // namespace

FileLock::FileLock(const std::filesystem::path& path, bool wait, LockMode mode) {
  const int operation = (mode == LockMode::kShared ? LOCK_SH : LOCK_EX) | (wait ? 0 : LOCK_NB);
  for (;;) {
    fd_ = OpenForLock(path);
    if (fd_ < 0) return;
    int rc;
    while ((rc = flock(fd_, operation)) != 0 && errno == EINTR) {
    }
    if (rc != 0) return;
    if (StillAtPath(fd_, path)) {
      held_ = true;
      return;
    }
    close(fd_);
    fd_ = -1;
  }
}

FileLock::~FileLock() {
  if (fd_ >= 0) close(fd_);
}

}  // namespace anvil
