#include "tasks/meta_spec.h"

#include <chrono>
#include <nlohmann/json.hpp>

#include "core/files.h"
#include "core/python.h"

namespace anvil {
namespace fs = std::filesystem;
namespace {

constexpr auto kWorkerStart = std::chrono::seconds(60);
constexpr auto kPerTask = std::chrono::seconds(10);

fs::path CacheFile(const fs::path& cache_dir, const std::string& sha256) {
  return cache_dir / "specs" / (sha256 + ".meta-v1.json");
}

MetaSpec FromLine(const std::string& line) {
  const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
  if (!j.is_object()) return {"", "the spec worker wrote something that is not JSON: " + line.substr(0, 200)};
  if (j.contains("error")) return {"", j["error"].is_string() ? j["error"].get<std::string>() : j["error"].dump()};
  return {line, ""};
}

}  // namespace

Result<std::map<std::string, MetaSpec>> MetaSpecs(const std::vector<Task>& tasks, const fs::path& cache_dir) {
  std::map<std::string, MetaSpec> specs;
  std::vector<const Task*> missing;
  for (const Task& t : tasks) {
    if (specs.count(t.sha256)) continue;
    if (auto cached = ReadFile(CacheFile(cache_dir, t.sha256)); cached.ok()) {
      specs[t.sha256] = FromLine(cached.value());
    } else {
      specs[t.sha256] = {};
      missing.push_back(&t);
    }
  }
  if (missing.empty()) return specs;
  std::vector<std::string> args;
  for (const Task* t : missing) args.push_back(t->path.string());
  ProcessSpec spec = PythonWorkerSpec("task_spec", args);
  spec.deadline = kWorkerStart + kPerTask * static_cast<int>(missing.size());
  spec.output_cap = std::size_t{64} << 20;
  auto run = RunProcess(spec);
  if (!run.ok()) return Status::Error("cannot start the spec worker: " + run.message());
  const std::string& out = run.value().out;
  std::size_t at = 0;
  for (const Task* t : missing) {
    const std::size_t end = out.find('\n', at);
    if (end == std::string::npos) {
      specs[t->sha256] = {"",
                          "the spec worker stopped (" + run.value().Describe() + "): " + TailLines(run.value().err, 3)};
      continue;
    }
    const std::string line = out.substr(at, end - at);
    at = end + 1;
    specs[t->sha256] = FromLine(line);
    if (!specs[t->sha256].error.empty()) continue;  // Not cached: a missing module may be installed later.
    std::error_code ec;
    fs::create_directories(CacheFile(cache_dir, t->sha256).parent_path(), ec);
    (void)WriteFileAtomic(CacheFile(cache_dir, t->sha256), line);
  }
  return specs;
}

}  // namespace anvil
