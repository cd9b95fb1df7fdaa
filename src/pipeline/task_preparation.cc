// The evaluator's tasks: each is prepared once (on the device, beside its
// candidates' extraction and compile, which need only its init arguments),
// shared by every evaluation of it, and waited for when the evaluator ends.
#include <cstdlib>
#include <future>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "pipeline/device_gate.h"
#include "pipeline/evaluator.h"  // These Evaluator members are defined here.
#include "run/device_memory.h"
#include "tasks/prepare.h"
#include "verify/compare.h"

namespace anvil {
namespace fs = std::filesystem;
namespace {

// The tolerances the trivial-output guard checks with: the policy's for each
// floating dtype, a task sidecar's where it sets one ("" when the policy has
// no guard). --atol/--rtol are the run's, not the task's: the guard's atol
// scale applies to them as well.
std::string GuardTolerances(const Policy& policy, const Task& task) {
  if (!policy.trivial_guard) return "";
  nlohmann::json tolerance = nlohmann::json::object();
  for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16}) {
    const Tolerance t = DefaultTolerance(dtype, policy);
    tolerance[std::string(DTypeName(dtype))] = {t.atol, t.rtol};
  }
  for (const auto& o : task.tolerances) {
    if (tolerance.contains(o.dtype)) tolerance[o.dtype] = {o.atol, o.rtol};
  }
  return nlohmann::json({{"tolerance", tolerance}, {"nan_equal", policy.nan_equal}}).dump();
}

// Whether preparations take turns (DeviceGate::preparations): on a GPU, unless
// ANVIL_PREPARE_ALONE=0; elsewhere only with ANVIL_PREPARE_ALONE=1.
bool PrepareAlone(const Backend& backend) {
  const char* env = std::getenv("ANVIL_PREPARE_ALONE");
  if (env != nullptr && *env != '\0') return std::string(env) != "0";
  return backend.kind() == BackendKind::kCuda;
}

}  // namespace

Evaluator::~Evaluator() {
  std::map<std::string, std::shared_future<Result<PreparedTask>>> running;
  {
    std::lock_guard<std::mutex> lock(mu_);
    running.swap(preparing_);
  }
  for (auto& [sha, f] : running) {
    if (f.valid()) f.wait();  // Before device_ and mu_ go: the preparation uses them.
  }
}

Result<PreparedTask> Evaluator::Prepare(const Task& task) { return PrepareAsync(task).get(); }

std::shared_future<Result<PreparedTask>> Evaluator::PrepareAsync(const Task& task) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = preparing_.find(task.sha256);
  if (it != preparing_.end()) {
    const auto& f = it->second;
    const bool failed = f.wait_for(std::chrono::seconds(0)) == std::future_status::ready && !f.get().ok();
    if (!failed) return f;
  }
  auto prepare = [this, task]() -> Result<PreparedTask> {
    auto torch = Torch();
    if (!torch.ok()) return torch.status();
    if (!backend_.HasDevice()) {
      return Status::Error("no " + backend_.name() + " device is present on this machine: the reference for task " +
                           task.name + " cannot run here");
    }
    PrepareOptions po;
    po.cache_dir = options_.cache_dir;
    po.trials = options_.trials;
    po.max_trial_bytes = options_.max_trial_bytes;
    if (options_.perf) po.timing_sets = options_.iters;
    po.policy = options_.policy.Id();
    po.reference_tf32 = options_.policy.reference_tf32;
    po.guard = GuardTolerances(options_.policy, task);
    Task with_sets = task;
    if (options_.held_out_auto && with_sets.held_out_json.empty()) with_sets.held_out_json = "\"auto\"";
    // The device's turn, taken once the cache has no folder for the task.
    std::optional<SlotHold> alone;  // Taken before the device: a preparation waiting here holds nothing.
    std::optional<SharedDeviceHold> hold;
    auto asked = std::chrono::steady_clock::now(), given = asked;
    po.before_device = [&] {
      asked = std::chrono::steady_clock::now();
      if (PrepareAlone(backend_)) alone.emplace(device_.preparations());
      hold.emplace(device_);
      given = std::chrono::steady_clock::now();
    };
    auto prepared = PrepareTask(with_sets, backend_, torch.value().torch_version, po);
    if (!prepared.ok() && SaysDeviceOutOfMemory(prepared.message())) {
      // The device refused the reference memory while others held it: the
      // next task is prepared beside the current candidate and the task
      // server (bench/results/all_problems_h100_call7.md, L1 52). Prepared
      // again, once, with the device alone; a failure then is the task's.
      hold.reset();
      alone.reset();
      asked = std::chrono::steady_clock::now();
      ExclusiveDeviceHold exclusive(device_);
      given = std::chrono::steady_clock::now();
      po.before_device = nullptr;
      prepared = PrepareTask(with_sets, backend_, torch.value().torch_version, po);
      if (!prepared.ok()) {
        return Status::Error(prepared.message() +
                             "\n(prepared twice: the second time with the device alone, no candidate or other "
                             "preparation beside it; the task's reference may need more memory than this device has)");
      }
    }
    if (prepared.ok()) {
      prepared.value().turn_asked = asked;
      prepared.value().turn_given = given;
    }
    return prepared;
  };
  auto f = std::async(std::launch::async, std::move(prepare)).share();
  preparing_[task.sha256] = f;
  return f;
}

bool Evaluator::FirstToUse(const PreparedTask& prepared) {
  if (prepared.cached) return false;
  std::lock_guard<std::mutex> lock(mu_);
  return used_.insert(prepared.dir.string()).second;
}

void Evaluator::ForgetTasks() {
  std::lock_guard<std::mutex> lock(mu_);
  preparing_.clear();
  init_args_.clear();
}

Result<fs::path> Evaluator::InitArgs(const Task& task) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = init_args_.find(task.sha256);
    if (it != init_args_.end()) return it->second;
  }
  auto torch = Torch();
  if (!torch.ok()) return torch.status();
  PrepareOptions po;
  po.cache_dir = options_.cache_dir;
  auto file = TaskInitArgs(task, torch.value().torch_version, po);
  if (!file.ok()) return file.status();
  std::lock_guard<std::mutex> lock(mu_);
  init_args_[task.sha256] = file.value();
  return file;
}

}  // namespace anvil
