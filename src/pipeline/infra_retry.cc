// The one owner of retries (issue 35): an infra_error that came while the
// candidate's code ran is tried again, alone among this process's
// evaluations, after the machine proved healthy on a known-good candidate. A
// failure that recurs with this candidate alone is taken for its doing:
// runtime_error, `suspect_candidate` — unless the task's own reference, run
// as the candidate, fails so too: then the task cannot be judged on this
// machine (too large for its device, say) and the verdict stays infra_error.
// Nothing else in anvil retries a verdict (the reward service and the trainer
// adapters do not).
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <string>

#include "core/environment.h"
#include "core/files.h"
#include "pipeline/device_gate.h"
#include "pipeline/evaluator.h"
#include "run/device_memory.h"
#include "verify/feedback.h"
#include "verify/policy.h"

namespace anvil {
namespace fs = std::filesystem;
namespace {

// Every try of every evaluation in this process holds it shared; a retry
// holds it alone, so that no other job's load or failure lands in it.
DeviceGate& JobsGate() {
  static DeviceGate gate;
  return gate;
}

std::string FirstLine(const std::string& text) { return text.substr(0, text.find('\n')); }

// The verdict once every try failed while the machine stayed healthy.
void JudgeSuspect(Verdict& v, const std::vector<std::string>& errors, const RewardOptions& reward) {
  v.status = VerdictStatus::kRuntimeError;
  v.suspect_candidate = true;
  v.run.ran = true;
  v.run.ok = false;
  v.run.stage = "";
  std::string each;
  for (std::size_t i = 0; i < errors.size(); ++i) {
    each += "\n  try " + std::to_string(i + 1) + ": " + FirstLine(errors[i]);
  }
  v.run.message = "anvil could not judge this candidate: all " + std::to_string(errors.size()) +
                  " tries failed inside anvil while its code ran, though between them the machine judged a "
                  "known-good kernel correctly, alone. The failure comes with this candidate only, so it is "
                  "counted as the candidate's" +
                  each;
  v.error.clear();
  v.reward = ComputeReward(v, reward);
  v.feedback = MakeFeedback(v);
}

}  // namespace

bool InjectedInfraFault(const fs::path& candidate) {
  // TEXT[:N], read once; limit -1: every run.
  struct Fault {
    std::string text;
    long limit = -1;
  };
  static const std::optional<Fault> fault = []() -> std::optional<Fault> {
    const char* spec = std::getenv("ANVIL_INJECT_INFRA");
    if (spec == nullptr || *spec == '\0') return std::nullopt;
    const std::string s = spec;
    const auto colon = s.rfind(':');
    if (colon == std::string::npos) return Fault{s};
    return Fault{s.substr(0, colon), std::strtol(s.c_str() + colon + 1, nullptr, 10)};
  }();
  static std::atomic<long> injected{0};
  if (!fault || candidate.string().find(fault->text) == std::string::npos) return false;
  return fault->limit < 0 || injected.fetch_add(1) < fault->limit;
}

Verdict Evaluator::Evaluate(const Task& task, const fs::path& candidate, const Lanes& lanes) {
  const auto start = std::chrono::steady_clock::now();
  Verdict v;
  {
    SharedDeviceHold others(JobsGate());
    v = EvaluateOnce(task, candidate, lanes);
  }
  auto retryable = [&] { return v.status == VerdictStatus::kInfraError && v.infra_while_candidate; };
  if (options_.infra_retries <= 0 || !retryable()) return v;
  std::vector<std::string> errors;
  for (int k = 0; k < options_.infra_retries && retryable(); ++k) {
    errors.push_back(v.error);
    // No other evaluation of this process starts until the retry ends; those
    // running finish first.
    ExclusiveDeviceHold alone(JobsGate());
    // A device out of memory is tried again on an idle device (the task
    // server's failure says so in its error, a candidate's run in device_busy).
    if (v.device_busy || (backend_.kind() == BackendKind::kCuda && SaysDeviceOutOfMemory(v.error))) {
      if (Status idle = WaitForIdleDevice(); !idle.ok()) {
        v.error += "\n[anvil] not tried again: " + idle.message() +
                   ". Judge it again once nothing else runs on the device (or give anvil a device of its own)";
        v.feedback = MakeFeedback(v);
        break;
      }
    }
    if (Status healthy = ProbeHealth(); !healthy.ok()) {
      v.error +=
          "\n[anvil] not tried again: the machine failed its health probe (" + FirstLine(healthy.message()) + ")";
      v.feedback = MakeFeedback(v);
      break;
    }
    v = EvaluateOnce(task, candidate, lanes);
    v.infra_retries = k + 1;
    for (const std::string& error : errors) v.infra_retry_causes.push_back(FirstLine(error));
  }
  // A device others held is never the candidate's doing, however often.
  if (retryable() && v.infra_retries == options_.infra_retries && !v.device_busy) {
    errors.push_back(v.error);
    ExclusiveDeviceHold alone(JobsGate());
    if (Status judgeable = ProbeTask(task); !judgeable.ok()) {
      v.error += "\n[anvil] not counted as the candidate's: " + judgeable.message() +
                 ". This machine cannot judge the task as it is (look at the error above: device memory, disk)";
      v.feedback = MakeFeedback(v);
    } else {
      JudgeSuspect(v, errors, options_.reward);
    }
  }
  v.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return v;
}

Evaluator* Evaluator::ProbeEvaluator(std::unique_ptr<Evaluator>& slot,
                                     const std::function<void(EvalOptions&)>& adjust) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!slot) {
    EvalOptions options = options_;
    options.perf = false;
    options.infra_retries = 0;
    adjust(options);
    slot = std::make_unique<Evaluator>(backend_, options, gate_);
  }
  return slot.get();
}

Status Evaluator::ProbeTask(const Task& task) {
  if (task.source.find("class Model") == std::string::npos) return Status::Ok();
  auto dir = MakeTempDir("anvil-task-probe-");
  if (!dir.ok()) return Status::MachineError("cannot make a folder for the task probe: " + dir.message());
  const fs::path candidate = dir.value() / (task.name + "_reference.py");
  Status written = WriteFileAtomic(
      candidate, task.source + "\n\n# anvil's task probe: the reference as the candidate.\nModelNew = Model\n");
  if (!written.ok()) {
    (void)RemoveTree(dir.value());
    return Status::MachineError("cannot write the task probe: " + written.message());
  }
  Evaluator* probe = ProbeEvaluator(task_probe_, [](EvalOptions& options) {
    options.format = "kernelbench";
    options.policy = PolicyNamed("kernelbench-v0.1").value();
    options.static_verdicts = false;
  });
  const Verdict v = probe->EvaluateOnce(task, candidate, {});
  (void)RemoveTree(dir.value());
  if (v.status != VerdictStatus::kInfraError || !v.infra_while_candidate) return Status::Ok();
  return Status::MachineError("the task's own reference, run as the candidate, failed inside anvil too (" +
                              FirstLine(v.error) + ")");
}

Status Evaluator::WaitForIdleDevice() {
  auto reader = NvmlReader();
  if (reader == nullptr) return Status::Ok();  // Cannot tell: tried again as without the driver's count.
  // Only anvil's planned processes (the task server) may stay.
  return anvil::WaitForIdleDevice(*reader, PlannedDeviceProcesses(), options_.idle_device_wait);
}

Status Evaluator::ProbeHealth() {
  fs::path candidate;
  switch (backend_.kind()) {
    case BackendKind::kCpu:
      candidate = SourceDir() / "examples" / "candidates" / "relu" / "pass_native.cpp";
      break;
    case BackendKind::kCuda:
      candidate = SourceDir() / "examples" / "health" / "relu.cu";
      break;
    default:
      return Status::Error("no health probe for the " + backend_.name() + " backend");
  }
  auto task = LoadTask(SourceDir() / "examples" / "tasks" / "relu.py");
  if (!task.ok()) return task.status();
  Evaluator* probe = ProbeEvaluator(probe_, [](EvalOptions& options) { options.format = ""; });
  const Verdict v = probe->EvaluateOnce(task.value(), candidate, {});
  if (v.status == VerdictStatus::kPass) return Status::Ok();
  return Status::Error("the bundled relu " + candidate.filename().string() + " was judged " + StatusName(v.status) +
                       (v.error.empty() ? "" : ": " + v.error));
}

}  // namespace anvil
