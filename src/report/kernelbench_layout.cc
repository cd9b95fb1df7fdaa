#include "report/kernelbench_layout.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <map>

#include "core/environment.h"

namespace anvil {
namespace fs = std::filesystem;
namespace {

constexpr std::string_view kNamePattern = "level_{L}_problem_{P}_sample_{S}_kernel.{py,cu,cpp}";

// Consumes `literal` at the front of `s`.
bool Eat(std::string_view& s, std::string_view literal) {
  if (s.substr(0, literal.size()) != literal) return false;
  s.remove_prefix(literal.size());
  return true;
}

// Consumes a non-negative decimal number at the front of `s`.
bool EatNumber(std::string_view& s, int& value) {
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end == s.data() || s.front() == '-' || s.front() == '+') return false;
  s.remove_prefix(static_cast<std::size_t>(end - s.data()));
  return true;
}

bool IsCandidateExtension(std::string_view ext) {
  return ext == ".py" || ext == ".cu" || ext == ".cpp" || ext == ".cc";
}

bool HasLevelFolder(const fs::path& dir) {
  std::error_code ec;
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    std::string name = it->path().filename().string();
    int level = 0;
    std::string_view rest = name;
    if (Eat(rest, "level") && EatNumber(rest, level) && rest.empty() && it->is_directory(ec)) return true;
  }
  return false;
}

// Problem files of one level folder by their numeric prefix ("19_ReLU.py" -> 19).
using ProblemFiles = std::map<int, std::vector<fs::path>>;

ProblemFiles ListProblems(const fs::path& level_dir) {
  ProblemFiles files;
  std::error_code ec;
  for (auto it = fs::directory_iterator(level_dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const fs::path& p = it->path();
    if (p.extension() != ".py" || !it->is_regular_file(ec)) continue;
    std::string stem = p.stem().string();
    std::string_view rest = stem;
    int number = 0;
    if (EatNumber(rest, number) && Eat(rest, "_")) files[number].push_back(p);
  }
  for (auto& [number, paths] : files) std::sort(paths.begin(), paths.end());
  return files;
}

}  // namespace

std::optional<SampleId> ParseSampleFileName(std::string_view name) {
  SampleId id;
  std::string_view s = name;
  if (!Eat(s, "level_") || !EatNumber(s, id.level) || !Eat(s, "_problem_") || !EatNumber(s, id.problem) ||
      !Eat(s, "_sample_") || !EatNumber(s, id.sample) || !Eat(s, "_kernel")) {
    return std::nullopt;
  }
  if (!IsCandidateExtension(s)) return std::nullopt;
  return id;
}

fs::path DefaultKernelBenchRoot() {
  const char* env = std::getenv("ANVIL_KERNELBENCH");
  if (env != nullptr && *env != '\0') return env;
  return (SourceDir() / ".." / "shared" / "kernelbench").lexically_normal();
}

Result<fs::path> ResolveProblemRoot(const fs::path& root) {
  std::error_code ec;
  if (!fs::is_directory(root, ec)) return Status::Error("KernelBench problems not found: no folder " + root.string());
  if (HasLevelFolder(root)) return root;
  if (HasLevelFolder(root / "KernelBench")) return root / "KernelBench";
  return Status::Error("KernelBench problems not found: " + root.string() +
                       " holds no level1/, level2/, ... folder (nor KernelBench/level1/, ...)");
}

Result<KernelBenchRun> ReadKernelBenchRun(const fs::path& run_dir, const fs::path& kernelbench_root) {
  std::error_code ec;
  if (!fs::is_directory(run_dir, ec)) return Status::Error("run folder not found: " + run_dir.string());
  auto root = ResolveProblemRoot(kernelbench_root);
  if (!root.ok()) return root.status();
  KernelBenchRun run;
  run.problem_root = root.value();

  std::vector<fs::path> files;
  for (auto it = fs::directory_iterator(run_dir, ec); it != fs::directory_iterator(); it.increment(ec)) {
    if (ec) break;
    std::string name = it->path().filename().string();
    std::error_code type_ec;
    if (name.empty() || name.front() == '.' || !it->is_regular_file(type_ec)) continue;
    if (IsCandidateExtension(it->path().extension().string())) files.push_back(it->path());
  }
  if (ec) return Status::Error("cannot read run folder " + run_dir.string() + ": " + ec.message());
  std::sort(files.begin(), files.end());

  std::map<SampleId, fs::path> by_id;
  for (const auto& f : files) {
    std::string name = f.filename().string();
    auto id = ParseSampleFileName(name);
    if (!id) {
      run.skipped.push_back({name, "name does not match " + std::string(kNamePattern)});
      continue;
    }
    auto [it, inserted] = by_id.emplace(*id, f);
    if (!inserted) {
      run.skipped.push_back(
          {name, "a second candidate for the same sample (" + it->second.filename().string() + " is evaluated)"});
    }
  }

  std::map<int, std::optional<ProblemFiles>> levels;  // nullopt: no such level folder.
  std::map<std::pair<int, int>, Result<Task>> tasks;
  std::map<std::pair<int, int>, std::size_t> missing_index;
  for (const auto& [id, file] : by_id) {
    std::pair<int, int> key{id.level, id.problem};
    auto task_it = tasks.find(key);
    if (task_it == tasks.end()) {
      fs::path level_dir = run.problem_root / ("level" + std::to_string(id.level));
      auto level_it = levels.find(id.level);
      if (level_it == levels.end()) {
        std::optional<ProblemFiles> listed;
        if (fs::is_directory(level_dir, ec)) listed = ListProblems(level_dir);
        level_it = levels.emplace(id.level, std::move(listed)).first;
      }
      Result<Task> task = Status::Error("");
      const std::string wanted = std::to_string(id.problem) + "_*.py";
      if (!level_it->second) {
        task = Status::Error("no folder " + level_dir.string());
      } else if (!level_it->second->count(id.problem)) {
        task = Status::Error("no problem file " + wanted + " in " + level_dir.string());
      } else if (const auto& matches = level_it->second->at(id.problem); matches.size() > 1) {
        std::string names;
        for (const auto& m : matches) {
          if (!names.empty()) names += ", ";
          names += m.filename().string();
        }
        task = Status::Error("several problem files match " + wanted + " in " + level_dir.string() + ": " + names);
      } else {
        task = LoadTask(matches.front());
      }
      task_it = tasks.emplace(key, std::move(task)).first;
    }
    if (task_it->second.ok()) {
      run.jobs.push_back({id, Job{task_it->second.value(), file, ExpectedStatus(file)}});
      continue;
    }
    auto [miss_it, first] = missing_index.emplace(key, run.missing.size());
    if (first) run.missing.push_back({id.level, id.problem, task_it->second.message(), {}});
    run.missing[miss_it->second].files.push_back(file.filename().string());
  }
  return run;
}

}  // namespace anvil
