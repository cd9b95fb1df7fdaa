#include "compile/artifact_cache.h"

#include <cstdlib>

#include "core/files.h"

namespace anvil {
namespace fs = std::filesystem;

std::optional<fs::path> ArtifactCache::Lookup(const std::string& key) const {
  fs::path dir = root_ / key;
  std::error_code ec;
  if (!fs::exists(dir / "complete", ec)) return std::nullopt;
  fs::last_write_time(dir, fs::file_time_type::clock::now(), ec);
  return dir;
}

fs::path ArtifactCache::LockPath(const std::string& key) const {
  std::error_code ec;
  fs::create_directories(root_ / "locks", ec);
  return root_ / "locks" / (key + ".lock");
}

fs::path ArtifactCache::FailedLogPath(const std::string& key) const { return root_ / "failed" / (key + ".log"); }

Result<fs::path> ArtifactCache::Scratch() const {
  std::error_code ec;
  fs::create_directories(root_, ec);
  if (ec) return Status::Error("cannot create artifact cache " + root_.string() + ": " + ec.message());
  std::string tmpl = (root_ / ".build-XXXXXX").string();
  if (mkdtemp(tmpl.data()) == nullptr) return Status::Error("cannot create a build folder in " + root_.string());
  return fs::path(tmpl);
}

Result<fs::path> ArtifactCache::Publish(const std::string& key, const fs::path& scratch) const {
  Status s = WriteFileAtomic(scratch / "complete", key);
  if (!s.ok()) return s;
  fs::path dir = root_ / key;
  std::error_code ec;
  fs::rename(scratch, dir, ec);
  if (ec) {
    (void)RemoveTree(scratch);
    if (Lookup(key)) return dir;
    return Status::Error("cannot publish artifact " + dir.string() + ": " + ec.message());
  }
  return dir;
}

}  // namespace anvil
