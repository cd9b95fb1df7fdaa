#include "pipeline/verdict_cache.h"

#include <nlohmann/json.hpp>

#include "core/files.h"
#include "core/sha256.h"

namespace anvil {
namespace fs = std::filesystem;

std::string VerdictOptionsFingerprint(const EvalOptions& o) {
  const auto optional = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  return nlohmann::json({{"policy", o.policy.Id()},
                         {"format", o.format},
                         {"trials", o.trials},
                         {"compile_deadline_s", o.compile_deadline.count()},
                         {"run_deadline_ms", o.run_deadline.count()},
                         {"perf", o.perf},
                         {"warmup", o.warmup},
                         {"iters", o.iters},
                         {"baseline_eager", o.baseline_eager},
                         {"baseline_compile", o.baseline_compile},
                         {"atol", optional(o.atol)},
                         {"rtol", optional(o.rtol)},
                         {"reward", {o.reward.lambda, o.reward.nu_max, o.reward.against_compile}},
                         {"held_out_auto", o.held_out_auto},
                         // A tighter quota may fail what a looser one passed.
                         {"run_quota", {o.run_quota.memory_bytes, o.run_quota.pids, o.run_quota.cpu_seconds}}})
      .dump();
}

std::string VerdictCacheKey(const VerdictKeyParts& p) {
  const std::string parts[] = {"anvil-verdict-v2", ANVIL_VERSION,  p.task_sha256,   p.format,        p.options,
                               p.backend,          p.device_model, p.torch_version, p.candidate_text};
  std::string joined;
  for (const std::string& part : parts) joined += std::to_string(part.size()) + ":" + part + ";";
  return Sha256Hex(joined);
}

bool VerdictCacheable(const std::string& status) { return status != "infra_error" && status != "timeout"; }

VerdictCache::VerdictCache(const fs::path& cache_dir) : dir_(cache_dir / "verdicts") {}

fs::path VerdictCache::Path(const std::string& key) const { return dir_ / (key + ".json"); }

std::optional<std::string> VerdictCache::Lookup(const std::string& key, const std::string& candidate) {
  auto text = ReadFile(Path(key));
  if (!text.ok()) return std::nullopt;
  nlohmann::json v = nlohmann::json::parse(text.value(), nullptr, false);
  if (!v.is_object() || !v.contains("status") || !v["status"].is_string() ||
      !VerdictCacheable(v["status"].get<std::string>())) {
    return std::nullopt;
  }
  std::error_code ec;
  fs::last_write_time(Path(key), fs::file_time_type::clock::now(), ec);  // Its last use, for `anvil cache prune`.
  v["cached"] = true;
  if (v.contains("candidate") && v["candidate"].is_object()) v["candidate"]["path"] = candidate;
  return v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Status VerdictCache::Store(const std::string& key, const std::string& verdict_json) {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) return Status::Error("cannot make " + dir_.string() + ": " + ec.message());
  return WriteFileAtomic(Path(key), verdict_json);
}

}  // namespace anvil
