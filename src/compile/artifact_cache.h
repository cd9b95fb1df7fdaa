// Content-addressed store of build artifacts: a key (hash of sources, flags,
// toolchain) names a folder holding the shared object and the compiler log.
// Publishing is atomic (build in a temporary folder, rename), so concurrent
// builders of the same key never see a half-written artifact. A hit marks the
// folder as used (its mtime), which is what `anvil cache prune` evicts by.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "core/status.h"

namespace anvil {

class ArtifactCache {
 public:
  explicit ArtifactCache(std::filesystem::path root) : root_(std::move(root)) {}

  const std::filesystem::path& root() const { return root_; }

  // The published folder for `key`, if any; its mtime becomes now (errors ignored).
  std::optional<std::filesystem::path> Lookup(const std::string& key) const;
  // The lock file builders of `key` hold while building (root/locks is created).
  std::filesystem::path LockPath(const std::string& key) const;
  // Where the full log of `key`'s failed build is kept (failed builds are not cached).
  std::filesystem::path FailedLogPath(const std::string& key) const;
  // A fresh private folder to build into.
  Result<std::filesystem::path> Scratch() const;
  // The same for a candidate's build: in memory where the machine has room
  // (MakeScratchDir, core/files.h), so that what its compilers write counts
  // against their memory quota and a full disk cannot fail them; else
  // Scratch(). Its error is the machine's (Status::MachineError).
  Result<std::filesystem::path> BuildScratch() const;
  // Moves `scratch` into place as `key`'s folder and returns it (a copy from
  // another filesystem: a full disk is a MachineError). When another
  // builder won the race, discards `scratch` and returns theirs.
  Result<std::filesystem::path> Publish(const std::string& key, const std::filesystem::path& scratch) const;

 private:
  std::filesystem::path root_;
};

}  // namespace anvil
