#include "tasks/task.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/files.h"
#include "core/sha256.h"

namespace anvil {
namespace fs = std::filesystem;
namespace {

int LevelFromPath(const fs::path& path) {
  for (fs::path p = path.parent_path(); !p.empty() && p != p.root_path(); p = p.parent_path()) {
    std::string name = p.filename().string();
    if (name.size() > 5 && name.rfind("level", 0) == 0 && std::all_of(name.begin() + 5, name.end(), ::isdigit)) {
      return std::stoi(name.substr(5));
    }
  }
  return 0;
}

Status ApplySidecar(const fs::path& sidecar, Task& task) {
  auto text = ReadFile(sidecar);
  if (!text.ok()) return text.status();
  nlohmann::json j = nlohmann::json::parse(text.value(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return Status::Error(sidecar.string() + ": not a JSON object");
  }
  if (j.contains("level")) {
    if (!j["level"].is_number_integer()) return Status::Error(sidecar.string() + ": level must be an integer");
    task.level = j["level"].get<int>();
  }
  if (j.contains("tolerance")) {
    if (!j["tolerance"].is_object()) {
      return Status::Error(sidecar.string() + ": tolerance must map dtype -> {atol, rtol}");
    }
    for (auto& [dtype, tol] : j["tolerance"].items()) {
      if (!tol.is_object() || !tol.value("atol", nlohmann::json()).is_number() ||
          !tol.value("rtol", nlohmann::json()).is_number()) {
        return Status::Error(sidecar.string() + ": tolerance." + dtype + " needs numeric atol and rtol");
      }
      task.tolerances.push_back({dtype, tol["atol"].get<double>(), tol["rtol"].get<double>()});
    }
  }
  if (j.contains("held_out")) {
    const auto& h = j["held_out"];
    bool ok = h.is_array() && !h.empty();
    for (std::size_t i = 0; ok && i < h.size(); ++i) {
      ok = h[i].is_object() && !h[i].empty();
      for (auto it = h[i].begin(); ok && it != h[i].end(); ++it) {
        // A value, or {"use": "name"}: another module global (an input maker).
        ok = it->is_number() || it->is_boolean() || it->is_string() ||
             (it->is_object() && it->size() == 1 && it->contains("use") && (*it)["use"].is_string());
      }
    }
    if (!ok) {
      return Status::Error(sidecar.string() +
                           ": held_out must be a list of objects mapping the task's module globals to numbers, "
                           "booleans, strings or {\"use\": \"other_global\"}, e.g. [{\"batch_size\": 5}]");
    }
    task.held_out_json = h.dump();
  }
  task.sha256 = Sha256Hex(task.source + "\n--sidecar--\n" + text.value());
  return Status::Ok();
}

}  // namespace

Result<Task> LoadTask(const fs::path& file) {
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) return Status::Error("task file not found: " + file.string());
  if (file.extension() != ".py") {
    return Status::Error("task " + file.string() + " is not a .py file (KernelBench format expected)");
  }
  auto source = ReadFile(file);
  if (!source.ok()) return source.status();
  Task task;
  task.path = fs::absolute(file, ec).lexically_normal();
  task.name = file.stem().string();
  task.source = std::move(source).value();
  task.sha256 = Sha256Hex(task.source);
  task.level = LevelFromPath(task.path);
  fs::path sidecar = file.parent_path() / (file.stem().string() + ".anvil.json");
  if (fs::exists(sidecar, ec)) {
    Status s = ApplySidecar(sidecar, task);
    if (!s.ok()) return s;
  }
  return task;
}

Result<std::vector<Task>> DiscoverTasks(const fs::path& file_or_dir) {
  std::error_code ec;
  if (!fs::exists(file_or_dir, ec)) return Status::Error("no such task file or folder: " + file_or_dir.string());
  std::vector<fs::path> files;
  if (fs::is_directory(file_or_dir, ec)) {
    for (auto it = fs::recursive_directory_iterator(file_or_dir, ec); it != fs::recursive_directory_iterator();
         it.increment(ec)) {
      if (ec) break;
      std::string name = it->path().filename().string();
      if (it->is_directory() && (name.starts_with(".") || name == "__pycache__")) {
        it.disable_recursion_pending();
        continue;
      }
      if (it->is_regular_file() && it->path().extension() == ".py" && name != "__init__.py") {
        files.push_back(it->path());
      }
    }
  } else {
    files.push_back(file_or_dir);
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) return Status::Error("no task files (*.py) under " + file_or_dir.string());
  std::vector<Task> tasks;
  for (const auto& f : files) {
    auto t = LoadTask(f);
    if (!t.ok()) return t.status();
    tasks.push_back(std::move(t).value());
  }
  return tasks;
}

}  // namespace anvil
