#include "core/file_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>

namespace anvil {

FileLock::FileLock(const std::filesystem::path& path, bool wait)
    : fd_(open(path.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0600)) {
  if (fd_ < 0) return;
  int rc;
  while ((rc = flock(fd_, wait ? LOCK_EX : LOCK_EX | LOCK_NB)) != 0 && errno == EINTR) {
  }
  held_ = rc == 0;
}

FileLock::~FileLock() {
  if (fd_ >= 0) close(fd_);
}

}  // namespace anvil
