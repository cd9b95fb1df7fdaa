// An advisory lock (flock) on a file or a folder, held for the object's
// lifetime: how separate anvil processes agree that one of them prepares a task
// or builds an artifact while the others wait and then reuse the result, and
// that a folder in use is not removed (shared holders; a remover takes it
// exclusively, without waiting). Not copyable. If the file cannot be opened,
// the lock is simply not taken (callers stay correct, only duplicate work
// becomes possible). A lock file may be unlinked by whoever holds it (`anvil
// cache prune` does): a waiter then finds its lock stale and locks the path anew.
#pragma once

#include <filesystem>

namespace anvil {

enum class LockMode { kExclusive, kShared };

class FileLock {
 public:
  explicit FileLock(const std::filesystem::path& path) : FileLock(path, true) {}
  // With `wait` false, takes the lock only if no one holds it: see held(). A
  // missing file is created; a folder is locked as it is.
  FileLock(const std::filesystem::path& path, bool wait, LockMode mode = LockMode::kExclusive);
  ~FileLock();
  // Whether this object holds the lock (always, when it waited and the file opened).
  bool held() const { return held_; }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_ = -1;
  bool held_ = false;
};

}  // namespace anvil
