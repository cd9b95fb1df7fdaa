// Verdicts kept by what decides them, so that a candidate answered again (the
// same code from another sample, a rerun) is not judged again: the task's
// content (with its sidecar), the candidate's format and text, every option
// that changes a verdict, the backend, the device model and the versions of
// anvil and torch. infra_error and timeout verdicts are never kept (the
// machine's, or a deadline a busy machine may miss). Files under
// <cache>/verdicts/, one per key; `anvil cache` counts and prunes them.
// Thread-safe: files are written whole (rename) and read whole.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "core/status.h"
#include "pipeline/evaluator.h"

namespace anvil {

struct VerdictKeyParts {
  std::string task_sha256;
  std::string format;
  std::string candidate_text;
  std::string options;  // VerdictOptionsFingerprint.
  std::string backend;
  std::string device_model;
  std::string torch_version;
};

// The options of `o` that change a verdict, as text.
std::string VerdictOptionsFingerprint(const EvalOptions& o);

// A hex SHA-256 over every part (and anvil's version).
std::string VerdictCacheKey(const VerdictKeyParts& parts);

// Whether a verdict of `status` may be kept.
bool VerdictCacheable(const std::string& status);

class VerdictCache {
 public:
  explicit VerdictCache(const std::filesystem::path& cache_dir);

  // The verdict JSON kept under `key`, with "cached": true and its candidate
  // path set to `candidate`; nullopt on a miss (or an unreadable entry).
  std::optional<std::string> Lookup(const std::string& key, const std::string& candidate);
  // Keeps `verdict_json` (a status VerdictCacheable allows) under `key`.
  Status Store(const std::string& key, const std::string& verdict_json);

  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path Path(const std::string& key) const;
  std::filesystem::path dir_;
};

}  // namespace anvil
