#include "cache/cache_scan.h"

#include <algorithm>
#include <cctype>
#include <string_view>

#include "compile/artifact_cache.h"
#include "compile/host_pch.h"
#include "compile/torch_pch.h"
#include "core/files.h"
#include "tasks/prepare.h"

namespace anvil {
namespace fs = std::filesystem;
namespace {

// The layout (pipeline/evaluator.cc, tasks/prepare.cc, compile/artifact_cache.h):
// artifacts/<key>/, artifacts/failed/<key>.log, artifacts/locks/<key>.lock,
// tasks/<name>-<hash>/ and tasks/<name>-<hash>.lock; tasks/<name>-<hash>.init.json (a few hundred bytes,
// counted as other).
constexpr char kArtifactsFolder[] = "artifacts";
constexpr char kTasksFolder[] = "tasks";
constexpr char kFailedFolder[] = "failed";
constexpr char kCompleteMarker[] = "complete";
constexpr std::size_t kArtifactKeyLength = 64;  // Sha256Hex.
constexpr std::size_t kTaskHashLength = 16;

bool IsHex(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

// Calls `visit` with each child of `dir`; stops quietly at an error (the
// cache may change meanwhile).
template <typename Visit>
void ForEachChild(const fs::path& dir, Visit visit) {
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) visit(it->path());
}

bool IsArtifactKey(std::string_view name) { return name.size() == kArtifactKeyLength && IsHex(name); }

bool IsTaskFolderName(std::string_view name) {
  const std::size_t dash = name.rfind('-');
  return dash != std::string_view::npos && dash > 0 && name.front() != '.' &&
         name.size() - dash - 1 == kTaskHashLength && IsHex(name.substr(dash + 1));
}

bool IsRealFolder(const fs::path& path) {
  std::error_code ec;
  return fs::is_directory(fs::symlink_status(path, ec));
}

bool IsRealFile(const fs::path& path) {
  std::error_code ec;
  return fs::is_regular_file(fs::symlink_status(path, ec));
}

CacheEntry MakeEntry(CacheKind kind, const fs::path& path, fs::path lock) {
  CacheEntry entry{kind, path, std::move(lock), TreeBytes(path), {}};
  std::error_code ec;
  entry.last_used = fs::last_write_time(path, ec);
  return entry;
}

void AddOther(const fs::path& path, CacheContents& contents) {
  ++contents.other.count;
  contents.other.bytes += TreeBytes(path);
}

// A leftover of a killed prune, else false.
bool TakeLeftover(const fs::path& path, CacheContents& contents) {
  if (path.filename().string().rfind(kPruningPrefix, 0) != 0 || !IsRealFolder(path)) return false;
  contents.leftovers.push_back(MakeEntry(CacheKind::kOther, path, {}));
  AddOther(path, contents);
  return true;
}

CacheKind ArtifactKind(const fs::path& dir) {
  std::error_code ec;
  if (fs::exists(dir / kTorchPchFile, ec)) return CacheKind::kTorchPch;
  if (fs::exists(dir / (std::string(kHostPchHeader) + ".gch"), ec)) return CacheKind::kHostPch;
  return CacheKind::kArtifact;
}

void ScanFailedBuilds(const fs::path& dir, const ArtifactCache& artifacts, CacheContents& contents) {
  ForEachChild(dir, [&](const fs::path& path) {
    if (path.extension() == ".log" && IsArtifactKey(path.stem().string()) && IsRealFile(path)) {
      contents.entries.push_back(MakeEntry(CacheKind::kFailedBuild, path, artifacts.LockPath(path.stem().string())));
    } else {
      AddOther(path, contents);
    }
  });
}

void ScanArtifacts(const fs::path& dir, CacheContents& contents) {
  const ArtifactCache artifacts(dir);
  ForEachChild(dir, [&](const fs::path& path) {
    const std::string name = path.filename().string();
    std::error_code exists_ec;
    if (IsArtifactKey(name) && IsRealFolder(path) && fs::exists(path / kCompleteMarker, exists_ec)) {
      contents.entries.push_back(MakeEntry(ArtifactKind(path), path, artifacts.LockPath(name)));
    } else if (name == kFailedFolder && IsRealFolder(path)) {
      ScanFailedBuilds(path, artifacts, contents);
    } else if (!TakeLeftover(path, contents)) {
      AddOther(path, contents);  // locks/, builds in progress (.build-*), anything unknown.
    }
  });
}

void ScanTasks(const fs::path& dir, CacheContents& contents) {
  ForEachChild(dir, [&](const fs::path& path) {
    if (IsTaskFolderName(path.filename().string()) && IsRealFolder(path)) {
      contents.entries.push_back(MakeEntry(CacheKind::kTask, path, PreparedTaskLockPath(path)));
    } else if (!TakeLeftover(path, contents)) {
      AddOther(path, contents);  // Lock files.
    }
  });
}

// Kept verdicts: one file each (pipeline/verdict_cache.h), no lock (written whole by rename).
void ScanVerdicts(const fs::path& dir, CacheContents& contents) {
  ForEachChild(dir, [&](const fs::path& path) {
    if (path.extension() == ".json" && IsRealFile(path)) {
      contents.entries.push_back(MakeEntry(CacheKind::kVerdict, path, {}));
    } else if (!TakeLeftover(path, contents)) {
      AddOther(path, contents);  // A write in progress (a temporary file).
    }
  });
}

}  // namespace

const char* CacheKindName(CacheKind kind) {
  switch (kind) {
    case CacheKind::kArtifact:
      return "artifacts";
    case CacheKind::kTorchPch:
      return "torch_pch";
    case CacheKind::kHostPch:
      return "host_pch";
    case CacheKind::kFailedBuild:
      return "failed_builds";
    case CacheKind::kTask:
      return "tasks";
    case CacheKind::kVerdict:
      return "verdicts";
    case CacheKind::kOther:
      return "other";
  }
  return "other";
}

std::array<CacheKindTotal, kCacheKinds> CacheContents::ByKind() const {
  std::array<CacheKindTotal, kCacheKinds> totals{};
  for (const CacheEntry& entry : entries) {
    CacheKindTotal& total = totals[static_cast<std::size_t>(entry.kind)];
    ++total.count;
    total.bytes += entry.bytes;
  }
  totals[static_cast<std::size_t>(CacheKind::kOther)] = other;
  return totals;
}

CacheKindTotal CacheContents::Total() const {
  CacheKindTotal total;
  for (const CacheKindTotal& kind : ByKind()) {
    total.count += kind.count;
    total.bytes += kind.bytes;
  }
  return total;
}

Result<CacheContents> ScanCache(const fs::path& root) {
  std::error_code ec;
  if (!fs::is_directory(root, ec)) return Status::Error("no cache folder at " + root.string());
  fs::directory_iterator top(root, ec);
  if (ec) return Status::Error("cannot read the cache folder " + root.string() + ": " + ec.message());
  CacheContents contents;
  ForEachChild(root, [&](const fs::path& path) {
    const std::string name = path.filename().string();
    if (name == kArtifactsFolder && IsRealFolder(path)) {
      ScanArtifacts(path, contents);
    } else if (name == kTasksFolder && IsRealFolder(path)) {
      ScanTasks(path, contents);
    } else if (name == "verdicts" && IsRealFolder(path)) {
      ScanVerdicts(path, contents);
    } else {
      AddOther(path, contents);  // torch_info/, sandbox/, anything unknown.
    }
  });
  std::sort(contents.entries.begin(), contents.entries.end(), [](const CacheEntry& a, const CacheEntry& b) {
    return a.last_used != b.last_used ? a.last_used < b.last_used : a.path < b.path;
  });
  return contents;
}

}  // namespace anvil
