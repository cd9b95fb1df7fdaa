#include "compile/artifact_cache.h"

#include <cstdlib>

#include "core/files.h"

namespace anvil {
namespace fs = std::filesystem;
namespace {

// Room a candidate's build may want in memory: objects, nvcc's intermediate
// files, the library (an honest KernelBench build writes tens of MB).
constexpr std::uintmax_t kBuildScratchBytes = std::uintmax_t{1} << 30;

}  // namespace

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

Result<fs::path> ArtifactCache::BuildScratch() const {
  auto made = MakeScratchDir("anvil-build-", kBuildScratchBytes);
  if (made.ok()) return made;
  auto here = Scratch();
  return here.ok() ? here : Status::MachineError(here.message());
}

Result<fs::path> ArtifactCache::Publish(const std::string& key, const fs::path& built) const {
  Status s = WriteFileAtomic(built / "complete", key);
  if (!s.ok()) return Status::MachineError(s.message());
  fs::path dir = root_ / key;
  fs::path scratch = built;
  std::error_code ec;
  if (fs::rename(scratch, dir, ec); ec == std::errc::cross_device_link) {
    // Built in memory: a copy beside the target first, then the rename.
    auto staged = Scratch();
    if (!staged.ok()) {
      (void)RemoveTree(built);
      return Status::MachineError(staged.message());
    }
    ec.clear();
    fs::copy(built, staged.value(), fs::copy_options::recursive | fs::copy_options::overwrite_existing, ec);
    (void)RemoveTree(built);
    if (ec) {
      (void)RemoveTree(staged.value());
      // libstdc++ may report a full disk as EIO (its sendfile loop): say how much room there is.
      return Status::MachineError("cannot copy the build into " + root_.string() + ": " + ec.message() + " (" +
                                  std::to_string(FreeBytes(root_) >> 20) + " MiB free there)");
    }
    scratch = staged.value();
    fs::rename(scratch, dir, ec);
  }
  if (ec) {
    (void)RemoveTree(scratch);
    if (Lookup(key)) return dir;
    return Status::MachineError("cannot publish artifact " + dir.string() + ": " + ec.message());
  }
  return dir;
}

}  // namespace anvil
