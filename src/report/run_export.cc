#include "report/run_export.h"

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "core/files.h"
#include "gen/extract_code.h"
#include "report/run_records.h"

namespace anvil {
namespace fs = std::filesystem;
namespace {

// The extension anvil generate gave the file it judged; ".py" for a sample with no code.
std::string Extension(const AttemptRow* a, const std::string& backend) {
  if (a == nullptr || !a->format || !a->code) return ".py";
  return CandidateExtension(*a->format, backend);
}

}  // namespace

Result<KernelBenchExport> ExportKernelBench(RunDb& db, int turn, const fs::path& dir) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_directory(ec) && name.starts_with("level")) {
      return Status::Error(
          dir.string() + " holds " + name +
          "/: it looks like a KernelBench problem tree, not a run folder; name an empty or new folder");
    }
  }
  auto info = db.Info();
  if (!info.ok()) return info.status();
  auto samples = SamplesAtTurn(db, turn);
  if (!samples.ok()) return samples.status();
  fs::create_directories(dir, ec);
  if (ec) return Status::Error("cannot make " + dir.string() + ": " + ec.message());
  KernelBenchExport out;
  std::map<std::string, bool> listed;
  for (const SampleAtTurn& s : samples.value()) {
    if (!s.task.problem) {
      if (!listed[s.task.name]) out.unnumbered.push_back(s.task.name);
      listed[s.task.name] = true;
      continue;
    }
    const AttemptRow* best = s.best ? &*s.best : nullptr;
    const std::string code = best != nullptr && best->code && best->outcome != "truncated" ? *best->code : "";
    const fs::path file =
        dir / ("level_" + std::to_string(s.task.level) + "_problem_" + std::to_string(*s.task.problem) + "_sample_" +
               std::to_string(s.sample) + "_kernel" + Extension(best, info.value().backend));
    if (Status w = WriteFileAtomic(file, code); !w.ok()) return w;
    ++out.files;
    if (code.empty()) ++out.empty;
  }
  return out;
}

Result<int> ExportJsonl(RunDb& db, const fs::path& file) {
  auto tasks = db.Tasks();
  if (!tasks.ok()) return tasks.status();
  auto attempts = db.Attempts();
  if (!attempts.ok()) return attempts.status();
  std::map<int64_t, const TaskRow*> task_by_id;
  for (const TaskRow& t : tasks.value()) task_by_id[t.id] = &t;
  std::ofstream out(file, std::ios::trunc);
  if (!out) return Status::Error("cannot write " + file.string());
  auto text = [](const std::optional<std::string>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  for (const AttemptRow& a : attempts.value()) {
    const TaskRow& t = *task_by_id.at(a.task_id);
    nlohmann::json verdict =
        a.verdict_json ? nlohmann::json::parse(*a.verdict_json, nullptr, false) : nlohmann::json(nullptr);
    if (verdict.is_discarded()) verdict = nullptr;
    nlohmann::json line = {{"task", t.name},
                           {"level", t.level},
                           {"problem", t.problem ? nlohmann::json(*t.problem) : nlohmann::json(nullptr)},
                           {"sha256", t.sha256},
                           {"sample", a.sample},
                           {"turn", a.turn},
                           {"state", AttemptStateName(a.state)},
                           {"outcome", text(a.outcome)},
                           {"reward", a.reward ? nlohmann::json(*a.reward) : nlohmann::json(nullptr)},
                           {"prime_echo", a.prime_echo ? nlohmann::json(*a.prime_echo) : nlohmann::json(nullptr)},
                           {"format", text(a.format)},
                           {"code", text(a.code)},
                           {"verdict", verdict}};
    out << line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  }
  out.flush();
  if (!out) return Status::Error("writing " + file.string() + " failed");
  return static_cast<int>(attempts.value().size());
}

}  // namespace anvil
