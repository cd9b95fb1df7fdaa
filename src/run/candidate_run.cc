#include "run/candidate_run.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>

#include "core/files.h"
#include "core/json_fields.h"
#include "core/python.h"
#include "core/report_pipe.h"
#include "integrity/candidate_sandbox.h"
#include "run/device_memory.h"
#include "run/worker_report.h"

namespace anvil {
namespace fs = std::filesystem;

namespace {
constexpr int kStderrTailLines = 25;

// What the child's folder says so far: its error and trial 0's aten ops; and
// how many trials it handed over (`trials_done`: the task server's count).
void ReadWritten(const fs::path& out_dir, int expected_trials, RunOutcome& out,
                 const std::function<int()>& trials_done) {
  if (const nlohmann::json error = ReadJsonObject(out_dir / "error.json"); !error.empty()) {
    out.stage = error.value("stage", "");
    out.message = error.value("message", "");
    out.traceback = error.value("traceback", "");
  }
  const nlohmann::json ops = ReadJsonObject(out_dir / "aten_ops.json");
  out.aten_compute = JsonStrings(ops, "compute");
  out.host_compute = JsonStrings(ops, "host");
  out.compute_seen_in = ops.contains("first") && ops["first"].is_string() ? ops["first"].get<std::string>() : "";
  out.tampered.clear();
  if (fs::exists(out_dir / "tamper.json")) {
    const nlohmann::json tamper = ReadJsonObject(out_dir / "tamper.json");
    out.tampered = JsonStrings(tamper, "changed");
    if (tamper.contains("when") && tamper["when"].is_string())
      out.tampered.push_back(tamper["when"].get<std::string>());
    if (out.tampered.empty()) out.tampered.push_back("unreadable tamper.json");
  }
  const nlohmann::json timeline = ReadJsonObject(out_dir / "timeline.json");
  for (const auto& [phase, seconds] : timeline.items()) {
    if (seconds.is_number() && seconds.get<double>() >= 0) out.phase_seconds[phase] = seconds.get<double>();
  }
  out.trials_completed = trials_done ? std::min(trials_done(), expected_trials) : 0;
}

// A random half of the timed calls (of the first 64), at least one and, from
// two calls on, not all: the traced ones give the kernel trace's evidence (and,
// in the kernelbench format, run under the aten and host traces), the others
// the times (the kernel trace costs a kernel ~1-3 %, the aten trace more).
uint64_t TracedCalls(int iters) {
  const int n = std::clamp(iters, 1, 64);
  std::random_device rd;
  std::mt19937_64 rng((static_cast<uint64_t>(rd()) << 32) ^ rd());
  std::vector<int> order(n);
  for (int i = 0; i < n; ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), rng);
  uint64_t mask = 0;
  for (int i = 0; i < std::max(1, n / 2); ++i) mask |= uint64_t{1} << order[i];
  return mask;
}

}  // namespace

fs::path KernelTraceLibrary(const Backend& backend, std::string* why_not) {
  if (backend.kind() != BackendKind::kCuda) {
    *why_not = "the kernel trace is recorded on CUDA only";
    return {};
  }
  if (const char* off = std::getenv("ANVIL_KERNEL_TRACE"); off != nullptr && std::string(off) == "0") {
    *why_not = "the kernel trace was turned off (ANVIL_KERNEL_TRACE=0)";
    return {};
  }
  std::error_code ec;
  fs::path lib = std::getenv("ANVIL_TRACE_LIB") != nullptr
                     ? fs::path(std::getenv("ANVIL_TRACE_LIB"))
                     : fs::read_symlink("/proc/self/exe", ec).parent_path() / "libanvil_trace.so";
  if (!fs::exists(lib, ec)) {
    *why_not = lib.string() + " is missing: build the anvil_trace target (it needs CUPTI's headers)";
    return {};
  }
  return lib;
}

Result<RunOutcome> RunCandidate(const Backend& backend, const RunRequest& request, int expected_trials) {
  std::error_code ec;
  fs::create_directories(request.out_dir, ec);
  if (ec) return Status::Error("cannot create " + request.out_dir.string() + ": " + ec.message());

  nlohmann::json builds = {{"extensions", nlohmann::json::object()}};
  for (const auto& [name, path] : request.artifacts) {
    if (name == "native") {
      builds["native"] = path;
    } else {
      builds["extensions"][name] = path;
    }
  }
  builds["keys"] = request.extension_keys;
  fs::path builds_file = request.out_dir / "builds.json";
  if (Status s = WriteFileAtomic(builds_file, builds.dump()); !s.ok()) return s;

  ProcessSpec spec = PythonWorkerSpec(
      "candidate_worker", {"run", "--candidate", request.candidate.string(), "--format", request.format, "--prepared",
                           request.prepared.string(), "--device", backend.TorchDevice(), "--out",
                           request.out_dir.string(), "--builds", builds_file.string()});
  spec.deadline = request.deadline;
  std::string no_trace;
  const fs::path trace_lib = request.time_after_trials ? KernelTraceLibrary(backend, &no_trace) : fs::path();
  if (!trace_lib.empty()) {
    spec.argv.push_back("--trace-lib");
    spec.argv.push_back(trace_lib.string());
  }
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  std::optional<Clock::time_point> announced;
  std::unique_ptr<CallClock> clock;
  if (request.time_after_trials) {
    auto opened = CallClock::Open();
    if (!opened.ok()) return opened.status();
    clock = std::move(opened).value();
    spec.pass_fds = clock->ChildFds();
    spec.started_pid = std::make_shared<std::atomic<int>>(0);
    clock->WatchQueue(spec.started_pid);
    if (request.before_go) clock->BeforeGo(request.before_go);
    if (request.before_recheck) clock->BeforeRecheck(request.before_recheck);
    for (const std::string& arg :
         {std::string("--clock-fds"), std::string("3,4"), std::string("--warmup"), std::to_string(request.warmup),
          std::string("--iters"), std::to_string(request.iters), std::string("--recheck-sets"),
          std::to_string(request.recheck_sets)}) {
      spec.argv.push_back(arg);
    }
    // The task server writes each call's inputs after "ready": the L2 flush
    // comes after go then (python/anvil_py/timing.py).
    if (request.before_go) spec.argv.push_back("--sets-written");
    auto extension = std::make_shared<std::atomic<int64_t>>(0);
    spec.deadline_extension_ms = extension;
    // Runs on the clock's thread while the child waits: the timed calls get
    // the whole deadline again, from when they are allowed.
    clock->StartAfterTrials(
        request.iters,
        [&, extension] {
          announced = Clock::now();
          extension->store(std::numeric_limits<int32_t>::max());  // The child waits for us meanwhile.
          RunOutcome trials;
          ReadWritten(request.out_dir, expected_trials, trials, request.trials_done);
          const bool time_them = request.time_after_trials(trials);
          extension->store(std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count());
          return time_them;
        },
        trace_lib.empty() && request.format != "kernelbench" ? 0 : TracedCalls(request.iters));
  }
  // The deadline counts from when the worker is ready to load the candidate:
  // an exec'd worker first imports torch (seconds on a loaded machine), which
  // is not the candidate's time.
  if (request.data_fd >= 0) PassAs(spec, "--data-fd", request.data_fd);
  ReportPipe report;
  if (Status s = report.Attach(spec, "--report-fd"); !s.ok()) return s;
  ReadyPipe ready;
  if (Status s = ready.Attach(spec, "--ready-fd"); !s.ok()) return s;
  spec.working_dir = request.out_dir.string();
  if (request.torch == nullptr) return Status::Error("RunCandidate: no torch info for the sandbox");
  CandidateAccess access;
  access.read = CandidateReadablePrepared(request.prepared);
  access.read.push_back(request.candidate);
  access.read.push_back(builds_file);
  for (const auto& [name, path] : request.artifacts) access.read.emplace_back(path);
  if (!trace_lib.empty()) access.read.push_back(trace_lib);
  if (const fs::path ops = OpsLibrary(); !ops.empty()) access.read.push_back(ops);
  if (const fs::path timer = TimerLibrary(); !timer.empty()) {
    access.read.push_back(timer);
  } else if (request.time_after_trials) {
    return Status::Error(
        "libanvil_timer.so is missing next to anvil (build the anvil_timer target, or set ANVIL_TIMER_LIB): "
        "anvil times candidates only in compiled code");
  }
  access.scratch = request.out_dir;
  access.hidden = CandidateHiddenPrepared(request.prepared);
  access.switches = request.sandbox_switches;
  access.cpu_seconds = request.quota.cpu_seconds;
  auto sandbox = CandidateSandbox(*request.torch, access);
  if (!sandbox.ok()) return sandbox.status();
  spec.sandbox = sandbox.value();
  for (auto& kv : CandidateEnvironment(request.out_dir)) spec.env.push_back(std::move(kv));
  for (auto& kv : backend.ChildEnv()) spec.env.push_back(std::move(kv));
  // The child measures its start-up from here (timeline.json).
  spec.env.emplace_back("ANVIL_SPAWN_NS", std::to_string(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                                             std::chrono::system_clock::now().time_since_epoch())
                                                             .count()));
  std::shared_ptr<JobCgroup> group;
  if (request.quota.any()) {
    auto made = JobCgroup::Create(request.quota);
    if (!made.ok()) return Status::Error("cannot keep the candidate's quotas: " + made.message());
    group = std::move(made.value());
    spec.cgroup = group;
  }
  // The run's device memory, watched while it runs (its processes are its
  // control group's).
  std::optional<DeviceMemoryWatch> device_watch;
  if (request.quota.device_memory_bytes > 0 && backend.kind() == BackendKind::kCuda) {
    std::string why_not;
    auto reader = NvmlReader(&why_not);
    if (reader == nullptr) return Status::Error("cannot keep the candidate's device-memory quota: " + why_not);
    if (!group) return Status::Error("cannot keep the candidate's device-memory quota without a control group");
    device_watch.emplace(
        reader, request.quota.device_memory_bytes, [g = group.get()] { return g->Processes(); },
        [g = group.get()] { g->KillAll(); }, PlannedDeviceBudgets());
  }
  auto r = RunProcess(spec);
  RunOutcome out;
  out.quota = request.quota;
  std::string device_watch_error;
  if (device_watch) {
    device_watch->Stop();
    out.device_memory_peak_bytes = device_watch->peak_bytes();
    out.device_memory_over = device_watch->over();
    out.device_others_peak_bytes = device_watch->others_peak_bytes();
    out.device_others = device_watch->others();
    device_watch_error = device_watch->error();
  }
  if (group) {
    out.usage = group->Usage();
    group.reset();  // Kills what the candidate left running (also outside its process group).
    spec.cgroup.reset();
  }
  if (clock) out.timed = clock->Finish();  // Joins the clock's thread: `announced` is settled.
  report.Finish();
  if (!r.ok()) return r.status();
  if (!device_watch_error.empty()) {
    // The quota was not kept for the rest of the run: never a run without it (the machine's failure).
    return Status::Error("cannot keep the candidate's device-memory quota: " + device_watch_error);
  }

  const ProcessResult& p = r.value();
  if (p.not_ready) {
    return Status::Error(NotReadyProblem("the candidate's worker was not ready to load it", spec, p));
  }
  out.timed_out = p.timed_out;
  out.exit_code = p.exit_code;
  out.term_signal = p.timed_out ? 0 : p.term_signal;
  out.seconds = p.wall_seconds;
  out.ready_seconds = p.ready_seconds;
  if (announced) out.trials_seconds = std::chrono::duration<double>(*announced - start).count();
  out.sandbox_layers = p.sandbox_layers;
  out.stderr_tail = TailLines(p.err + p.out, kStderrTailLines);
  ReadWritten(request.out_dir, expected_trials, out, request.trials_done);
  JudgeWorkerReport(report.Lines(), report.overflowed(), request.out_dir, p.Succeeded(), out);
  const bool timed = out.timed.calls_started;
  // A broken protocol is judged by the caller (a cheat), not a failed run.
  const bool wrote_all =
      out.trials_completed == expected_trials &&
      (!timed || static_cast<int>(out.timed.event_ms.size()) == request.iters || !out.timed.violation.empty());
  out.ok = p.Succeeded() && wrote_all;
  if (!p.timed_out && p.term_signal == SIGXCPU && out.quota.cpu_seconds > 0) {
    // The kernel's signal at the process's RLIMIT_CPU: its time is up, as at
    // a deadline (a candidate raising SIGXCPU itself only ends its own run).
    out.timed_out = true;
    out.term_signal = 0;
    out.stage = "cpu_quota";
    out.message = "the candidate's process used up its CPU-time quota of " + std::to_string(out.quota.cpu_seconds) +
                  " s (its threads together) and the kernel stopped it";
  } else if (out.device_memory_over) {
    // The driver's count, read by anvil: the kill was anvil's.
    out.timed_out = false;
    out.stage = "device_memory_quota";
    out.message =
        "the candidate's process " + OverDeviceMemoryQuota(out.quota.device_memory_bytes, out.device_memory_peak_bytes);
  } else if (!p.Succeeded() && out.usage.oom_kills > 0) {
    // The kernel's count, not anything the candidate printed.
    out.stage = "memory_quota";
    out.message = "the candidate's process " + OverMemoryQuota(out.quota);
  } else if (!out.ok && out.usage.pids_limit_hit) {
    out.message += std::string(out.message.empty() ? "" : "; ") + "it reached its quota of " +
                   std::to_string(out.quota.pids) + " processes and threads (a fork or a thread failed)";
  }
  if (p.Succeeded() && !wrote_all && out.message.empty()) {
    out.stage = "exit";
    out.message = out.trials_completed < expected_trials
                      ? "the candidate's process exited before producing all outputs (" +
                            std::to_string(out.trials_completed) + " of " + std::to_string(expected_trials) + " trials)"
                      : "the candidate's process exited before its timed calls were done (" +
                            std::to_string(out.timed.event_ms.size()) + " of " + std::to_string(request.iters) + ")";
  }
  return out;
}

}  // namespace anvil
