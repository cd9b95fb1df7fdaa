#include "tasks/prepare.h"

#include <cerrno>
#include <nlohmann/json.hpp>
#include <random>

#include "core/file_lock.h"
#include "core/files.h"
#include "core/python.h"
#include "core/sha256.h"

namespace anvil {
namespace fs = std::filesystem;
namespace {

// Part of every prepared task's key: 2 since init_inputs keep their tuples (docs/spec.md), 3 since a cached
// task keeps its trial seeds for the task server (kTrialSeedsFile).
constexpr int kProtocolVersion = 3;
constexpr int kTaskErrorExit = 3;
constexpr int kNoSpaceExit = 4;  // The worker's own write found the disk full (python/anvil_py/task_worker.py).
// A cached task's secret trial seeds, in order (never readable by a candidate: not on its allowlist).
constexpr const char* kTrialSeedsFile = "kept_seeds.json";
// Those of its timing sets, one per set.
constexpr const char* kTimingSeedsFile = "kept_timing_seeds.json";
// Its held-out sets' recipes, one per set (written by the task worker).
constexpr const char* kHeldOutSetsFile = "kept_held_out_sets.json";

// The seeds of a kept seeds file (a JSON array of strings); none when it is missing or malformed.
std::vector<std::string> KeptSeeds(const fs::path& file) {
  std::vector<std::string> seeds;
  auto text = ReadFile(file);
  nlohmann::json kept = text.ok() ? nlohmann::json::parse(text.value(), nullptr, false) : nlohmann::json();
  if (!kept.is_array()) return seeds;
  for (const auto& s : kept) {
    if (s.is_string()) seeds.push_back(s.get<std::string>());
  }
  return seeds;
}

// A comma-separated list of seeds as a JSON array of strings, the first `limit` (-1: all).
nlohmann::json SeedList(const std::string& joined, int limit = -1) {
  nlohmann::json seeds = nlohmann::json::array();
  for (std::size_t at = 0, next; at <= joined.size(); at = next + 1) {
    next = joined.find(',', at);
    if (next == std::string::npos) next = joined.size();
    if (next > at && (limit < 0 || static_cast<int>(seeds.size()) < limit))
      seeds.push_back(joined.substr(at, next - at));
  }
  return seeds;
}

bool NoSpace(const std::error_code& ec) { return ec == std::errc::no_space_on_device || ec.value() == EDQUOT; }

// A write of anvil's own failed for want of room: the machine's failure, never the task's or a candidate's.
Status NoSpaceError(const Task& task, const fs::path& where, const std::string& detail) {
  return Status::MachineError("task " + task.name + ": the disk holding " + where.string() +
                              " ran out of room while anvil prepared the task (" + detail +
                              "). Free some space (anvil cache prune --max-size SIZE) or put the temporary "
                              "folders (TMPDIR) and --cache-dir on a larger disk");
}

// The task worker's TF32 setting: exact fp32 unless the policy keeps torch's defaults.
void AddTf32(ProcessSpec& spec, bool reference_tf32) {
  spec.argv.push_back("--tf32");
  spec.argv.push_back(reference_tf32 ? "default" : "off");
}

std::string SecretSeeds(int n) {
  std::random_device rd;
  std::string seeds;
  for (int i = 0; i < n; ++i) {
    uint64_t s = (static_cast<uint64_t>(rd()) << 31) ^ rd();
    seeds += (i ? "," : "") + std::to_string(s & ((1ULL << 62) - 1));
  }
  return seeds;
}

std::string TaskErrorMessage(const Task& task, const fs::path& error_json, const ProcessResult& r) {
  auto text = ReadFile(error_json);
  if (text.ok()) {
    nlohmann::json j = nlohmann::json::parse(text.value(), nullptr, false);
    if (!j.is_discarded()) {
      std::string msg = "task " + task.name + " (" + task.path.string() + "): " + j.value("message", "") +
                        " [stage: " + j.value("stage", "?") + "]";
      std::string tb = TailLines(j.value("traceback", ""), 6);
      if (!tb.empty()) msg += "\n" + tb;
      return msg;
    }
  }
  return "task " + task.name + ": the task worker failed (" + r.Describe() + ")\n" + TailLines(r.err, 8);
}

// What the evaluation needs of the spec (timing sets, held-out sets, the
// trivial-output guard's findings) and the secret seeds the task server makes
// the trials and timing sets from: kept_seeds.json, or seeds.json for a
// streamed task.
Result<PreparedTask> ReadSeeds(PreparedTask prepared) {
  nlohmann::json parsed = nlohmann::json::parse(prepared.spec_json, nullptr, false);
  if (parsed.is_object()) {
    prepared.timing_sets = parsed.value("timing_sets", 0);
    prepared.trial_bytes = parsed.value("trial_bytes", int64_t{0});
    prepared.timing_seeds = KeptSeeds(prepared.dir / kTimingSeedsFile);
    if (static_cast<int>(prepared.timing_seeds.size()) != prepared.timing_sets) prepared.timing_seeds.clear();
  }
  if (parsed.is_object() && parsed.contains("held_out") && parsed["held_out"].is_array()) {
    for (const auto& set : parsed["held_out"]) {
      std::string text;
      for (const auto& [name, value] : set.items()) {
        const nlohmann::json& shown = value.is_object() && value.contains("use") ? value["use"] : value;
        text += (text.empty() ? "" : ", ") + name + "=" + (shown.is_string() ? shown.get<std::string>() : shown.dump());
      }
      prepared.held_out.push_back(text);
    }
  }
  if (!prepared.held_out.empty()) {
    auto kept = ReadFile(prepared.dir / kHeldOutSetsFile);
    nlohmann::json recipes = kept.ok() ? nlohmann::json::parse(kept.value(), nullptr, false) : nlohmann::json();
    if (!recipes.is_array() || recipes.size() != prepared.held_out.size()) {
      prepared.damaged = std::string(kHeldOutSetsFile) + " is missing or damaged";
    }
  }
  if (parsed.is_object() && parsed.contains("trivial_guard") && parsed["trivial_guard"].is_object()) {
    for (const auto& [name, entry] : parsed["trivial_guard"].items()) {
      if (entry.is_object() && entry.contains("atol_scale") && entry["atol_scale"].is_number()) {
        prepared.atol_scale[name] = entry["atol_scale"].get<double>();
      }
    }
  }
  if (parsed.is_object() && parsed.contains("degenerate") && parsed["degenerate"].is_string()) {
    prepared.degenerate = parsed["degenerate"].get<std::string>();
  }
  auto text = ReadFile(prepared.dir / "seeds.json");
  if (!text.ok()) {
    // A cached task's trial seeds (for the task server): prepare always keeps them, one per trial.
    prepared.seeds = KeptSeeds(prepared.dir / kTrialSeedsFile);
    if (static_cast<int>(prepared.seeds.size()) != prepared.trials) {
      prepared.seeds.clear();
      prepared.damaged = std::string(kTrialSeedsFile) + " is missing or damaged";
    }
    return prepared;
  }
  nlohmann::json j = nlohmann::json::parse(text.value(), nullptr, false);
  if (!j.is_array()) return Status::Error("malformed " + (prepared.dir / "seeds.json").string());
  prepared.streamed = true;
  nlohmann::json spec = nlohmann::json::parse(prepared.spec_json, nullptr, false);
  if (spec.is_object() && spec.contains("streamed") && spec["streamed"].is_object()) {
    prepared.trial_bytes = spec["streamed"].value("trial_bytes", int64_t{0});
  }
  for (const auto& s : j) prepared.seeds.push_back(s.is_string() ? s.get<std::string>() : s.dump());
  prepared.trials = static_cast<int>(prepared.seeds.size());
  if (prepared.seeds.empty()) prepared.damaged = "seeds.json holds no seed";
  return prepared;
}

// Taken while the preparers' lock is held, so a remover (which takes both,
// never waiting) cannot find the folder between its publication and this hold.
std::shared_ptr<const FileLock> HoldInUse(const fs::path& dir) {
  return std::make_shared<const FileLock>(dir, /*wait=*/true, LockMode::kShared);
}

}  // namespace

fs::path PreparedTaskLockPath(const fs::path& dir) { return dir.parent_path() / (dir.filename().string() + ".lock"); }

Result<PreparedTask> PrepareTask(const Task& task, const Backend& backend, const std::string& torch_version,
                                 const PrepareOptions& options) {
  // Baseline times live in the prepared folder: the device model is part of the key.
  const std::string base = task.sha256 + "|" + backend.name() + "|" + backend.DeviceModel() + "|" + torch_version +
                           "|" + std::to_string(options.trials) + "|" + std::to_string(options.init_seed) + "|" +
                           std::to_string(options.max_trial_bytes) + "|" + std::to_string(options.timing_sets) + "|" +
                           std::to_string(options.max_timing_bytes) + "|" + std::to_string(kProtocolVersion) + "|" +
                           options.policy + "|" + options.guard +
                           (task.held_out_json.empty() ? "" : "|" + task.held_out_json);
  fs::path root = options.cache_dir / "tasks";
  // No trial's, timing set's or held-out set's tensors are written: the task server makes them from the seeds and
  // recipes kept here. (Folders keyed without "|no-trial-files" held the trials' files, for the retired
  // --trial-data files; without "|held-out-recipes", the held-out sets' files: neither is read.)
  const fs::path dir = root / (task.name + "-" + Sha256Hex(base + "|no-trial-files|held-out-recipes").substr(0, 16));
  std::error_code ec;
  fs::create_directories(root, ec);
  if (NoSpace(ec)) return NoSpaceError(task, root, ec.message());
  if (ec) return Status::Error("cannot create cache folder " + root.string() + ": " + ec.message());

  PreparedTask prepared;
  prepared.dir = dir;
  prepared.trials = options.trials;
  FileLock lock(PreparedTaskLockPath(dir));
  if (auto spec = ReadFile(dir / "spec.json"); spec.ok()) {
    prepared.spec_json = std::move(spec).value();
    prepared.cached = true;
    fs::last_write_time(dir, fs::file_time_type::clock::now(), ec);
    prepared.in_use = HoldInUse(dir);
    return ReadSeeds(prepared);
  }

  if (options.before_device) options.before_device();
  auto tmp = MakeTempDir("anvil-prepare-");
  if (!tmp.ok()) return Status::MachineError(tmp.message());
  fs::path work = tmp.value() / "prepared";
  const std::string trial_seeds = SecretSeeds(options.trials);
  const std::string timing_seeds = SecretSeeds(options.timing_sets);
  ProcessSpec spec = PythonWorkerSpec(
      "task_worker", {"prepare", "--task", task.path.string(), "--out", work.string(), "--device",
                      backend.TorchDevice(), "--seeds", trial_seeds, "--init-seed", std::to_string(options.init_seed),
                      "--max-trial-bytes", std::to_string(options.max_trial_bytes), "--timing-seeds", timing_seeds,
                      "--max-timing-bytes", std::to_string(options.max_timing_bytes), "--held-out-seeds",
                      task.held_out_json.empty() ? std::string() : SecretSeeds(1)});
  if (!task.held_out_json.empty()) {
    spec.argv.push_back("--held-out");
    spec.argv.push_back(task.held_out_json);
  }
  AddTf32(spec, options.reference_tf32);
  if (!options.guard.empty()) {
    spec.argv.insert(spec.argv.end(), {"--guard", options.guard, "--guard-seeds", SecretSeeds(8)});
  }
  spec.deadline = options.deadline;
  for (auto& kv : backend.ChildEnv()) spec.env.push_back(std::move(kv));
  auto r = RunProcess(spec);
  if (!r.ok()) {
    (void)RemoveTree(tmp.value());
    return r.status();
  }
  if (r.value().exit_code == kNoSpaceExit) {
    (void)RemoveTree(tmp.value());
    return NoSpaceError(task, tmp.value().parent_path(), TailLines(r.value().err, 1));
  }
  if (!r.value().Succeeded()) {
    std::string msg = r.value().timed_out ? "task " + task.name + ": preparing the reference timed out after " +
                                                std::to_string(options.deadline.count()) + " s"
                                          : TaskErrorMessage(task, work / "error.json", r.value());
    if (r.value().exit_code != kTaskErrorExit && !r.value().timed_out) {
      msg = "task " + task.name + ": the task worker failed (" + r.value().Describe() + ")\n" +
            TailLines(r.value().err, 8);
    }
    (void)RemoveTree(tmp.value());
    return Status::Error(msg);
  }
  // The spec, read once: for the timing seeds kept below, the preparation's work and the caller.
  auto spec_text = ReadFile(work / "spec.json");
  if (!spec_text.ok()) {
    (void)RemoveTree(tmp.value());
    return spec_text.status();
  }
  const nlohmann::json spec_fields = nlohmann::json::parse(spec_text.value(), nullptr, false);
  if (!fs::exists(work / "seeds.json", ec)) {
    // Kept for the task server, which makes the trials and the timing sets from them (docs/protocol.md, "trial
    // data").
    Status s = WriteFileAtomic(work / kTrialSeedsFile, SeedList(trial_seeds).dump());
    if (s.ok()) {
      const int sets = spec_fields.is_object() ? spec_fields.value("timing_sets", 0) : 0;
      s = WriteFileAtomic(work / kTimingSeedsFile, SeedList(timing_seeds, sets).dump());
    }
    if (!s.ok()) {
      (void)RemoveTree(tmp.value());
      return Status::MachineError("task " + task.name + ": " + s.message());
    }
  }
  fs::rename(work, dir, ec);
  if (ec == std::errc::cross_device_link) {
    // The temporary folder and the cache are on different filesystems: a
    // copy beside the target (under the task's lock), then a rename there.
    ec.clear();
    const fs::path staged = dir.string() + ".staging";
    (void)RemoveTree(staged);
    fs::copy(work, staged, fs::copy_options::recursive, ec);
    if (!ec) fs::rename(staged, dir, ec);
    if (ec) (void)RemoveTree(staged);
  }
  (void)RemoveTree(tmp.value());
  if (NoSpace(ec)) return NoSpaceError(task, dir.parent_path(), "publishing it: " + ec.message());
  if (ec) return Status::Error("cannot publish prepared task into " + dir.string() + ": " + ec.message());
  prepared.spec_json = std::move(spec_text).value();
  prepared.seconds = r.value().wall_seconds;
  if (spec_fields.is_object() && spec_fields.contains("work_ms") && spec_fields["work_ms"].is_number()) {
    prepared.work_seconds = spec_fields["work_ms"].get<double>() / 1000;
  }
  prepared.in_use = HoldInUse(dir);
  return ReadSeeds(prepared);
}

Result<fs::path> TaskInitArgs(const Task& task, const std::string& torch_version, const PrepareOptions& options) {
  // "placeholders": the file also describes forward's inputs (docs/protocol.md, init); older ones did not.
  const std::string key = Sha256Hex(task.sha256 + "|init+placeholders|" + torch_version + "|" +
                                    std::to_string(options.init_seed) + "|" + std::to_string(kProtocolVersion));
  const fs::path root = options.cache_dir / "tasks";
  const fs::path file = root / (task.name + "-" + key.substr(0, 16) + ".init.json");
  std::error_code ec;
  fs::create_directories(root, ec);
  if (ec) return Status::Error("cannot create cache folder " + root.string() + ": " + ec.message());
  FileLock lock(fs::path(file.string() + ".lock"));
  if (fs::is_regular_file(file, ec)) return file;
  const fs::path error_json = file.string() + ".error.json";
  (void)fs::remove(error_json, ec);
  ProcessSpec spec = PythonWorkerSpec("task_worker", {"init", "--task", task.path.string(), "--init-seed",
                                                      std::to_string(options.init_seed), "--out", file.string()});
  spec.deadline = options.deadline;
  auto r = RunProcess(spec);
  if (!r.ok()) return r.status();
  if (r.value().exit_code == kNoSpaceExit) return NoSpaceError(task, root, TailLines(r.value().err, 1));
  if (!r.value().Succeeded() || !fs::is_regular_file(file, ec)) {
    std::string msg = TaskErrorMessage(task, error_json, r.value());
    (void)fs::remove(error_json, ec);
    return Status::Error(msg);
  }
  return file;
}

const char* BaselineModeName(BaselineMode mode) { return mode == BaselineMode::kEager ? "eager" : "compile"; }

namespace {

std::string BaselineFileName(BaselineMode mode, const BaselineOptions& options) {
  return std::string("baseline_") + BaselineModeName(mode) + "_" + std::to_string(options.warmup) + "x" +
         std::to_string(options.iters) + ".json";
}

}  // namespace

namespace {

// The baseline worker's measurement: its JSON, or why it has none.
Result<std::string> WorkerBaseline(const Task& task, const PreparedTask& prepared, const Backend& backend,
                                   BaselineMode mode, const BaselineOptions& options, const BaselineHooks& hooks,
                                   const fs::path& tmp) {
  ProcessSpec spec = PythonWorkerSpec(
      "task_worker", {"baseline", "--task", task.path.string(), "--prepared", prepared.dir.string(), "--device",
                      backend.TorchDevice(), "--mode", BaselineModeName(mode), "--warmup",
                      std::to_string(options.warmup), "--iters", std::to_string(options.iters), "--out", tmp.string()});
  AddTf32(spec, options.reference_tf32);
  spec.deadline = options.deadline;
  for (auto& kv : backend.ChildEnv()) spec.env.push_back(std::move(kv));
  std::optional<Handshake> ready_to_time;
  if (hooks.before_timing) {
    ready_to_time.emplace(hooks.before_timing);
    if (Status s = ready_to_time->Attach(spec, "--handshake-fd"); !s.ok()) return s;
  }
  if (hooks.before_start) hooks.before_start();
  auto r = RunProcess(spec);
  if (ready_to_time) ready_to_time->Finish();
  if (!r.ok()) return r.status();
  if (!r.value().Succeeded()) {
    return Status::Error("baseline worker " + r.value().Describe() + ": " + TailLines(r.value().err, 3));
  }
  return ReadFile(tmp);
}

}  // namespace

Baseline MeasureBaseline(const Task& task, const PreparedTask& prepared, const Backend& backend, BaselineMode mode,
                         const BaselineOptions& options, const BaselineHooks& hooks) {
  Baseline baseline;
  const std::string name = BaselineFileName(mode, options);
  fs::path file = prepared.dir / name;
  FileLock lock(prepared.dir / (name + ".lock"));
  auto text = ReadFile(file);
  if (text.ok()) {
    baseline.cached = true;
  } else {
    fs::path tmp = prepared.dir / (name + ".tmp");
    text = options.measure ? options.measure(mode, hooks)
                           : WorkerBaseline(task, prepared, backend, mode, options, hooks, tmp);
    if (!text.ok()) {
      baseline.error = text.message();
      return baseline;
    }
    // Kept for the next candidates (a failure to keep it costs only a measurement then).
    (void)WriteFileAtomic(file, text.value());
    std::error_code ec;
    fs::remove(tmp, ec);
  }
  nlohmann::json j = nlohmann::json::parse(text.value(), nullptr, false);
  if (j.is_discarded()) {
    baseline.error = "malformed baseline file " + file.string();
    return baseline;
  }
  if (j.contains("error") && j["error"].is_string()) {
    baseline.error = j["error"].get<std::string>();
    return baseline;
  }
  if (j.contains("compile_seconds") && j["compile_seconds"].is_number()) {
    baseline.compile_seconds = j["compile_seconds"].get<double>();
  }
  if (j.contains("compile_graphs") && j["compile_graphs"].is_number_integer()) {
    baseline.compile_graphs = j["compile_graphs"].get<int>();
  }
  if (!baseline.cached && j.contains("phases_ms") && j["phases_ms"].is_object()) {
    for (const auto& [phase, ms] : j["phases_ms"].items()) {
      if (ms.is_number() && ms.get<double>() >= 0) baseline.phase_seconds[phase] = ms.get<double>() / 1000;
    }
  }
  const auto times = j.value("times_ms", std::vector<double>{});
  baseline.stats = ComputeStats(times);
  if (!baseline.cached) {
    double ms = options.warmup * baseline.stats->median_ms;
    for (double t : times) ms += t;
    baseline.work_seconds = ms / 1000;
  }
  return baseline;
}

}  // namespace anvil
