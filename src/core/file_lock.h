// An exclusive advisory lock (flock) on a file, held for the object's lifetime:
// how separate anvil processes agree that one of them prepares a task or builds
// an artifact while the others wait and then reuse the result. Not copyable.
// If the lock file cannot be opened, the lock is simply not taken (callers stay
// correct, only duplicate work becomes possible).
#pragma once

#include <filesystem>

namespace anvil {

class FileLock {
 public:
  explicit FileLock(const std::filesystem::path& path) : FileLock(path, true) {}
  // With `wait` false, takes the lock only if no one holds it: see held().
  FileLock(const std::filesystem::path& path, bool wait);
  ~FileLock();
  // Whether this object holds the lock (always, when it waited and the file opened).
  bool held() const { return held_; }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_;
  bool held_ = false;
};

}  // namespace anvil
