// `anvil tasks`: list tasks, and derive and show their specs.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/eval_flags.h"
#include "cli/table.h"
#include "core/environment.h"
#include "pipeline/evaluator.h"

namespace anvil {
namespace fs = std::filesystem;
namespace {

struct TasksArgs {
  std::string path;
  bool spec = false;
  bool json = false;
  std::string backend = "cpu";
  std::string cache_dir;
  int trials = 5;
};

std::string Shape(const nlohmann::json& e) {
  if (e.contains("scalar")) return "scalar " + e["scalar"].dump();
  std::string s = e.value("dtype", "?") + "[";
  bool first = true;
  for (const auto& d : e.value("shape", nlohmann::json::array())) {
    s += (first ? "" : ", ") + d.dump();
    first = false;
  }
  return s + "]";
}

std::string Join(const nlohmann::json& entries) {
  std::string s;
  for (const auto& e : entries) s += (s.empty() ? "" : "; ") + e.value("name", "") + " " + Shape(e);
  return s.empty() ? "-" : s;
}

int Run(const TasksArgs& a) {
  fs::path path = a.path.empty() ? SourceDir() / "examples" / "tasks" : fs::path(a.path);
  auto tasks = DiscoverTasks(path);
  if (!tasks.ok()) {
    std::fprintf(stderr, "anvil tasks: %s\n", tasks.message().c_str());
    return kExitUsage;
  }
  if (!a.spec) {
    if (a.json) {
      nlohmann::json list = nlohmann::json::array();
      for (const auto& t : tasks.value()) {
        list.push_back({{"name", t.name}, {"level", t.level}, {"path", t.path.string()}, {"sha256", t.sha256}});
      }
      std::printf("%s\n", list.dump(2).c_str());
      return kExitOk;
    }
    TextTable table({"task", "level", "path"});
    for (const auto& t : tasks.value()) table.Add({t.name, std::to_string(t.level), t.path.string()});
    std::printf("%s%zu tasks\n", table.Render().c_str(), tasks.value().size());
    return kExitOk;
  }
  auto backend = Backend::FromName(a.backend);
  if (!backend.ok()) {
    std::fprintf(stderr, "anvil tasks: %s\n", backend.message().c_str());
    return kExitUsage;
  }
  // `anvil eval`'s own defaults, so that it finds the tasks prepared here in the cache.
  EvalFlags flags;
  flags.cache_dir = a.cache_dir;
  flags.trials = a.trials;
  auto options = ToEvalOptions(flags);
  if (!options.ok()) {
    std::fprintf(stderr, "anvil tasks: %s\n", options.message().c_str());
    return kExitUsage;
  }
  Evaluator evaluator(backend.value(), options.value());
  int failures = 0;
  for (const auto& t : tasks.value()) {
    auto prepared = evaluator.Prepare(t);
    if (!prepared.ok()) {
      ++failures;
      std::fprintf(stderr, "anvil tasks: %s\n", prepared.message().c_str());
      continue;
    }
    nlohmann::json spec = nlohmann::json::parse(prepared.value().spec_json, nullptr, false);
    if (a.json) {
      std::printf("%s\n", spec.dump(2).c_str());
      continue;
    }
    std::printf("%s (level %d)%s\n", t.name.c_str(), t.level, prepared.value().cached ? "  [cached]" : "");
    std::printf("  init:    %s\n", spec.value("init_inputs", nlohmann::json::array()).dump().c_str());
    std::printf("  inputs:  %s\n", Join(spec.value("inputs", nlohmann::json::array())).c_str());
    std::printf("  params:  %s\n", Join(spec.value("params", nlohmann::json::array())).c_str());
    std::printf("  outputs: %s\n", Join(spec.value("outputs", nlohmann::json::array())).c_str());
    std::string ops;
    for (const auto& op : spec.value("ops", nlohmann::json::array())) {
      ops += (ops.empty() ? "" : ", ") + op.value("op", "");
    }
    std::printf("  ops:     %s\n", ops.empty() ? "-" : ops.c_str());
  }
  return failures == 0 ? kExitOk : kExitUsage;
}

}  // namespace

void RegisterTasks(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<TasksArgs>();
  CLI::App* cmd = app.add_subcommand("tasks", "List tasks; with --spec, derive (and cache) and show their specs");
  cmd->add_option("path", args->path, "Task file or folder (default: the bundled examples)");
  cmd->add_flag("--spec", args->spec, "Run each reference and show inputs, parameters, outputs and ops");
  cmd->add_flag("--json", args->json, "Print JSON");
  cmd->add_option("-b,--backend", args->backend, "cpu or cuda")->capture_default_str();
  cmd->add_option("--cache-dir", args->cache_dir, "Cache folder (default $ANVIL_CACHE_DIR or ~/.cache/anvil)");
  cmd->add_option("--trials", args->trials, "Trials to prepare")->capture_default_str();
  cmd->callback([args, &exit_code] { exit_code = Run(*args); });
}

}  // namespace anvil
