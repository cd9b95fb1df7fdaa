#include "pipeline/evaluator.h"

#include <sys/resource.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <optional>
#include <string_view>

#include "compile/extract.h"
#include "core/environment.h"
#include "core/files.h"
#include "core/left_folders.h"
#include "core/sandbox.h"
#include "core/zygote.h"
#include "integrity/candidate_sandbox.h"
#include "integrity/static_legal.h"
#include "integrity/symbol_scan.h"
#include "pipeline/runtime_outcome.h"
#include "pipeline/scratch_budget.h"
#include "pipeline/server_trials.h"
#include "pipeline/stage_clock.h"
#include "run/candidate_run.h"
#include "run/device_memory.h"
#include "tasks/task_server.h"
#include "verify/compare.h"
#include "verify/feedback.h"
#include "verify/tensor_dir.h"

namespace anvil {
namespace fs = std::filesystem;
namespace {

// Where a source's headers are: the preprocessor's fallback in the static scan (integrity/source_expand.h).
IncludeDirs ScanIncludes(const TorchInfo& torch, const Backend& backend) {
  IncludeDirs dirs(torch.include_paths_cuda.begin(), torch.include_paths_cuda.end());
  if (!torch.python_include.empty()) dirs.emplace_back(torch.python_include);
  if (const fs::path nvcc = backend.NativeCompiler(); nvcc.is_absolute()) {
    dirs.push_back(nvcc.parent_path().parent_path() / "include");
  }
  dirs.push_back(SourceDir() / "include");
  return dirs;
}

// Room in a run's folder: the candidate's own files, logs, the kernel trace (no trial reaches it).
constexpr std::uintmax_t kRunScratchSlackBytes = std::uintmax_t{64} << 20;

std::string NowIso() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// The candidate's process's share of v.work_seconds: its kernel trace's busy
// time where one was judged, else the time of its trials and timed calls by
// its own clock (on the cpu backend, the device's work).
void CountCandidateWork(Verdict& v) {
  if (v.perf.trace.ran && v.perf.trace.work_ms > 0) {
    v.work_seconds["candidate"] = v.perf.trace.work_ms / 1000;
    return;
  }
  double seconds = 0;
  for (const char* phase : {"trials", "perf_calls"}) {
    auto it = v.run.phase_seconds.find(phase);
    if (it != v.run.phase_seconds.end()) seconds += it->second;
  }
  if (seconds > 0) v.work_seconds["candidate"] = seconds;
}

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

// DiskFullProblem for a failed run in `work`. No data of the task is
// written there (the task server holds the trials and takes the outputs):
// a folder grown past the slack is the candidate's own doing.
std::optional<std::string> DiskFull(const fs::path& work) {
  const std::uintmax_t free = FreeBytes(work);
  if (free >= kDiskLowBytes) return std::nullopt;  // Not worth counting the folder.
  return DiskFullProblem(work, free, TreeBytes(work), 0);
}

}  // namespace

Result<std::string> DetectFormat(const fs::path& candidate) {
  std::string ext = candidate.extension().string();
  if (ext == ".py") return std::string("kernelbench");
  if (ext == ".cpp" || ext == ".cc" || ext == ".cu" || ext == ".cxx") return std::string("native");
  return Status::Error("cannot tell the format of " + candidate.string() +
                       ": expected a .py (kernelbench) or .cpp/.cc/.cu (native) file; use --format");
}

Evaluator::Evaluator(Backend backend, EvalOptions options, std::shared_ptr<DeviceGate> gate)
    : backend_(std::move(backend)),
      options_(std::move(options)),
      gate_(gate ? std::move(gate) : std::make_shared<DeviceGate>()),
      device_(*gate_) {
  // Workers run in their own folders: every path handed to them must be absolute.
  std::error_code ec;
  options_.cache_dir = fs::absolute(options_.cache_dir, ec);
  CacheBound bound;
  if (options_.cache_bound) {
    bound = *options_.cache_bound;
  } else {
    bound.max_bytes = DefaultCacheMaxBytes(options_.cache_dir);
  }
  keeper_ = CacheKeeper::Shared(options_.cache_dir, bound);
  if (backend_.HasDevice()) {
    // Its start (importing torch: about a second) overlaps the first
    // candidate's preparation and build. A failure here is said where a
    // session needs the server.
    server_start_ = std::async(std::launch::async, [backend = backend_, budget = options_.trial_server_budget] {
      (void)TaskServer::For(backend, budget);
    });
  }
}

Result<TorchInfo> Evaluator::Torch() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!torch_) {
    auto info = LoadTorchInfo(options_.cache_dir);
    if (!info.ok()) return info.status();
    torch_ = info.value();
  }
  return *torch_;
}

std::string Evaluator::SandboxSwitches(const TorchInfo& torch) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!sandbox_switches_) {
    // Without a device only extraction (CPU) runs candidate code.
    const std::string device = backend_.HasDevice() ? backend_.TorchDevice() : "cpu";
    sandbox_switches_ = SandboxSwitchesFor(torch, device, backend_.DeviceModel(), options_.cache_dir);
  }
  return *sandbox_switches_;
}

std::string Evaluator::torch_version() {
  std::lock_guard<std::mutex> lock(mu_);
  return torch_ ? torch_->torch_version : "";
}

Verdict Evaluator::EvaluateOnce(const Task& task, const fs::path& candidate, const Lanes& lanes) {
  auto start = std::chrono::steady_clock::now();
  Verdict v;
  v.started_at = NowIso();
  v.task = task.name;
  v.task_path = task.path.string();
  v.level = task.level;
  std::error_code ec;
  const fs::path candidate_path = fs::absolute(candidate, ec).lexically_normal();
  v.candidate = candidate_path.string();
  v.backend = backend_.name();
  v.device_present = backend_.HasDevice();
  v.anvil_version = ANVIL_VERSION;
  v.policy = options_.policy;
  for (const auto& o : task.tolerances) {
    v.policy.overrides["sidecar." + o.dtype + ".atol"] = o.atol;
    v.policy.overrides["sidecar." + o.dtype + ".rtol"] = o.rtol;
  }
  if (options_.atol) v.policy.overrides["atol"] = *options_.atol;
  if (options_.rtol) v.policy.overrides["rtol"] = *options_.rtol;
  v.run.deadline_seconds = std::chrono::duration<double>(options_.run_deadline).count();

  auto finish = [&](VerdictStatus status) {
    v.status = status;
    CountCandidateWork(v);
    v.torch_version = torch_version();
    v.reward = ComputeReward(v, options_.reward);
    v.feedback = MakeFeedback(v);
    if (!v.task_degenerate.empty()) {
      v.feedback += "Note: this task is degenerate (" + v.task_degenerate +
                    " passes on every input anvil tried): its check cannot tell a kernel from an output that "
                    "computes nothing, so this verdict says little about the kernel.\n";
    }
    v.seconds = Seconds(start);
    return v;
  };
  auto infra = [&](std::string message) {
    v.error = std::move(message);
    return finish(VerdictStatus::kInfraError);
  };

  auto format = options_.format.empty() ? DetectFormat(candidate) : Result<std::string>(options_.format);
  if (!format.ok()) return infra(format.message());
  v.format = format.value();
  if (!fs::is_regular_file(candidate, ec)) return infra("candidate file not found: " + candidate.string());
  // The cache within its bound; the machine's disks above their floor, or no
  // job starts writing there (its failure would look like the candidate's)
  // and none is judged, once eviction could not make room.
  keeper_->Tick();
  auto full = NoRoomToJudge(options_.cache_dir);
  if (full) {
    (void)keeper_->KeepNow();
    full = NoRoomToJudge(options_.cache_dir);
  }
  if (full) return infra(*full);

  // Torch's build facts and the sandbox this machine allows: found once per
  // run (cached on disk); every gate needs them, and the workers' zygote.
  {
    StageClock clock(v, "setup");
    auto torch = Torch();
    if (!torch.ok()) return infra(torch.message());
    (void)SandboxSwitches(torch.value());
    // It starts once per run, in seconds: the run's time, not the first
    // verdicts' preparation or extraction (all_problems_h100_call8.md).
    (void)Zygote::Shared();
  }
  std::shared_future<Result<PreparedTask>> preparing;
  if (v.device_present) preparing = PrepareAsync(task);

  Gates(task, preparing, candidate_path, lanes, v);
  if (preparing.valid() && preparing.wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
    const Result<PreparedTask>& ready = preparing.get();
    if (ready.ok() && FirstToUse(ready.value())) v.work_seconds["prepare"] += ready.value().work_seconds;
  }
  return finish(v.status);
}

void Evaluator::Gates(const Task& task, const std::shared_future<Result<PreparedTask>>& preparing,
                      const fs::path& candidate, const Lanes& lanes, Verdict& v) {
  // Extraction and the compile are CPU work: in a batch they wait for a
  // compile slot, and later candidates' compiles overlap this one's runs.
  std::optional<SlotHold> compile_slot;
  if (lanes.compile != nullptr) v.compile_wait_seconds = compile_slot.emplace(*lanes.compile).waited();
  auto torch = Torch();
  if (!torch.ok()) {
    v.error = torch.message();
    v.status = VerdictStatus::kInfraError;
    return;
  }
  auto text = ReadFile(candidate);
  if (!text.ok()) {
    v.error = text.message();
    v.status = VerdictStatus::kInfraError;
    return;
  }
  CandidateSource source{candidate.filename().string(), text.value()};
  BuildOptions build_options;
  build_options.deadline = options_.compile_deadline;
  build_options.quota = options_.run_quota;
  ArtifactCache cache(options_.cache_dir / "artifacts");

  // Gate 0, first half: a kernelbench candidate's sources are extracted by
  // importing it (sandboxed); a native candidate is its own source.
  std::vector<ExtensionSpec> extensions;
  // From here on the candidate's code is imported, read by anvil's tools,
  // built and run: an infra_error may be its doing (Evaluate tries again).
  v.infra_while_candidate = true;
  if (v.format == "kernelbench") {
    // ModelNew is built with the task's init arguments, so that load_inline
    // calls made in its __init__ are extracted too.
    auto init_args = [&] {
      StageClock clock(v, "prepare");
      return InitArgs(task);
    }();
    if (!init_args.ok()) {
      v.error = init_args.message();
      v.status = VerdictStatus::kInfraError;
      v.infra_while_candidate = false;  // The task's.
      return;
    }
    auto x = [&] {
      StageClock clock(v, "extract");
      std::optional<SharedDeviceHold> cpu_work;  // On the cpu backend the CPU is the device.
      if (backend_.kind() == BackendKind::kCpu) v.device_wait_seconds += cpu_work.emplace(device_).waited();
      return ExtractExtensions(candidate, init_args.value(), torch.value(), SandboxSwitches(torch.value()),
                               options_.compile_deadline, options_.run_quota);
    }();
    if (!x.ok()) {
      v.error = "extracting the candidate's sources: " + x.message();
      v.status = VerdictStatus::kInfraError;
      return;
    }
    const Extraction& ex = x.value();
    // Tampering is a cheat whatever happened next; the static check below
    // still names what it sees.
    v.run.tampered = ex.tampered;
    if (!ex.tampered.empty() && (ex.failed || ex.syntax_error || ex.term_signal != 0)) {
      TamperCheat(v);
      return;
    }
    if (ex.term_signal == SIGSYS) {
      SandboxViolation(v, "importing the candidate");
      return;
    }
    if (ex.syntax_error) {
      v.compile.ran = true;
      v.compile.compiler = "python";
      Diagnostic d{source.file_name, ex.syntax_line, 0, "error", ex.message, {}, true};
      v.compile.diagnostics = {d};
      v.compile.summary = FormatDiagnostics(v.compile.diagnostics, source.text);
      v.compile.log = ex.traceback;
      (void)CheckStaticLegality(candidate, v.format, {}, {}, v.legal);
      v.status = VerdictStatus::kCompileError;
      return;
    }
    if (ex.failed) {
      v.run.ran = true;
      v.run.seconds = ex.seconds;
      v.run.timed_out = ex.timed_out;
      v.run.term_signal = ex.term_signal;
      v.run.stage = ex.stage;
      v.run.message = ex.message;
      v.run.traceback = ex.traceback;
      v.run.stderr_tail = ex.stderr_tail;
      if (ex.timed_out) v.run.deadline_seconds = static_cast<double>(options_.compile_deadline.count());
      v.status = ex.timed_out ? VerdictStatus::kTimeout : VerdictStatus::kRuntimeError;
      return;
    }
    extensions = ex.extensions;
  }

  // Gate 3's static half runs before the build: it needs only the sources
  // and no device, and a cheat is decided without paying for a compile.
  const auto sources = v.format == "kernelbench"
                           ? NativeSourcesOf(extensions)
                           : NativeSources{{source.file_name, source.text, backend_.kind() == BackendKind::kCuda, {}}};
  Status legal = [&] {
    StageClock clock(v, "static_check");
    const std::string kernelbench_checks =
        options_.policy.kernelbench_static ? (backend_.kind() == BackendKind::kCpu ? "cpu" : "cuda") : "";
    return CheckStaticLegality(candidate, v.format, sources, ScanIncludes(torch.value(), backend_), v.legal,
                               kernelbench_checks);
  }();
  if (!legal.ok()) {
    v.error = legal.message();
    v.status = VerdictStatus::kInfraError;
    return;
  }
  AllowByPolicy(v.policy, v.legal);
  DemoteStaticCheats(v.legal, !options_.static_verdicts);
  if (!v.run.tampered.empty()) TamperCheat(v);
  if (!v.legal.ok) {
    v.compile.native_sources = sources;
    v.compile.summary = "not built: static evidence decided the verdict";
    v.status = VerdictStatus::kCheat;
    v.perf.skipped = "static evidence decided the verdict";
    return;
  }

  // Gate 0: compile.
  {
    StageClock clock(v, "compile");
    std::optional<SharedDeviceHold> cpu_work;  // Compilers would slow a timed run on the cpu backend.
    if (backend_.kind() == BackendKind::kCpu) v.device_wait_seconds += cpu_work.emplace(device_).waited();
    if (v.format == "kernelbench") {
      v.compile = BuildKernelbench(extensions, source, backend_, torch.value(), cache, build_options);
      if (extensions.empty()) v.compile.ran = false;
    } else {
      v.compile = BuildNative(candidate, source, backend_, cache, build_options);
    }
  }
  if (v.compile.ran && !v.compile.cached) {
    if (build_options.quota.memory_bytes > 0) {
      v.quotas["compile_memory_bytes"] = static_cast<double>(build_options.quota.memory_bytes);
    }
    if (build_options.quota.pids > 0) v.quotas["compile_pids"] = build_options.quota.pids;
  }
  if (v.compile.ran && !v.compile.ok && !v.compile.anvil_problem.empty()) {
    v.error = v.compile.anvil_problem;
    v.status = VerdictStatus::kInfraError;
    // Killed over anvil's own small share: a retry alone keeps the quota.
    if (!v.compile.over_quota.empty()) v.infra_while_candidate = false;
    return;
  }
  if (v.compile.ran && !v.compile.ok) {
    // Built in memory (ArtifactCache::BuildScratch): a full disk did not fail it.
    v.status = VerdictStatus::kCompileError;
    return;
  }

  // Gate 3, the built objects: what token pasting and macros hid from the
  // source scan shows up as the symbols the library needs.
  {
    StageClock clock(v, "static_check");
    const bool libc_level = backend_.kind() == BackendKind::kCpu || v.format == "kernelbench";
    for (auto& hit : ScanArtifacts(v.compile.artifacts, libc_level)) {
      v.legal.hits.push_back(std::move(hit));
    }
    AllowByPolicy(v.policy, v.legal);
    DemoteStaticCheats(v.legal, !options_.static_verdicts);
  }
  if (!v.legal.ok) {
    v.status = VerdictStatus::kCheat;
    v.perf.skipped = "the built library's symbols decided the verdict";
    return;
  }
  if (!v.device_present) {
    v.error = "no " + backend_.name() +
              " device is present on this machine: the compile gate and the static checks passed, but the run, "
              "correctness and performance gates need one. Run on a machine with a GPU.";
    v.status = VerdictStatus::kInfraError;
    v.infra_while_candidate = false;
    return;
  }

  // Gates 1 and 2: run the trials in a child, compare in this process (and
  // gate 4's timed calls in the same child), once the task is prepared.
  compile_slot.reset();
  const auto waiting = std::chrono::steady_clock::now();
  const Result<PreparedTask>& ready = [&]() -> const Result<PreparedTask>& {
    StageClock clock(v, "prepare");  // What this evaluation waited for it, beyond its own build.
    return preparing.get();
  }();
  if (ready.ok()) {
    // The part of that wait in which the preparation itself waited for its
    // turn on the device is a queue: device_wait_seconds, not the stage's.
    const auto from = std::max(waiting, ready.value().turn_asked);
    const auto until = std::min(std::chrono::steady_clock::now(), ready.value().turn_given);
    const double queued = std::max(0.0, std::chrono::duration<double>(until - from).count());
    v.stage_seconds["prepare"] = std::max(0.0, v.stage_seconds["prepare"] - queued);
    v.device_wait_seconds += queued;
  }
  if (!ready.ok()) {
    v.error = ready.message();
    v.status = VerdictStatus::kInfraError;
    v.infra_while_candidate = false;  // The task's, or the disk's while preparing it.
    return;
  }
  const PreparedTask& prepared = ready.value();
  v.task_degenerate = prepared.degenerate;
  std::optional<SlotHold> run_slot;
  if (lanes.run != nullptr) v.device_wait_seconds += run_slot.emplace(*lanes.run).waited();

  // The run's folder, the only one the candidate may write; the trials never
  // reach it (the task server holds them). It is made in memory when its
  // outputs fit the budget now (no waiting): what the candidate writes there
  // counts against its memory quota, and a full disk cannot fail its run.
  // --keep-work keeps the folder on the disk, to be read afterwards.
  std::optional<ScratchReservation> scratch;
  if (std::getenv("ANVIL_SCRATCH_DIR") == nullptr && !options_.keep_work) {
    scratch.emplace(ScratchBudget::Memory(), kRunScratchSlackBytes);
  }
  const std::uintmax_t scratch_room = scratch ? scratch->bytes() : 0;
  auto made = scratch_room > 0 ? MakeScratchDir("anvil-eval-", scratch_room) : MakeTempDir("anvil-eval-");
  if (!made.ok()) {
    v.error = made.message();
    v.status = VerdictStatus::kInfraError;
    v.infra_while_candidate = false;
    return;
  }
  const fs::path work = made.value();
  struct RemoveWhenDone {
    const fs::path& dir;
    bool keep;
    ~RemoveWhenDone() {
      if (!keep) (void)RemoveTree(dir);
    }
  } remove_work{work, options_.keep_work};
  if (options_.keep_work) (void)WriteFileAtomic(work / kKeptMarker, "kept by --keep-work: not swept\n");
  // Queued for its timed calls, a candidate gives its run slot to the next
  // one if the device's queue has room; else it keeps it while it waits.
  bool queued = false;
  auto release_run_slot = [&] {
    if (!run_slot || lanes.timing_queue == nullptr || !lanes.timing_queue->TryAcquire()) return;
    queued = true;
    run_slot.reset();
  };
  const CheckedRun run = RunAndCheck(task, prepared, torch.value(), candidate, work, release_run_slot, v);
  if (queued) lanes.timing_queue->Release();
  if (!v.error.empty()) return;
  if (v.run.term_signal == SIGSYS) {
    SandboxViolation(v, "while it ran the trials");
    return;
  }
  if (WorkerFindingsCheat(v)) return;
  if (!v.run.ok) {
    // On the disk (no room in memory), a run that failed for want of room
    // there is the machine's; in memory the disk had no part in it.
    if (auto full = v.run.timed_out || scratch_room > 0 ? std::nullopt : DiskFull(work)) {
      v.error = *full;
      v.status = VerdictStatus::kInfraError;
      return;
    }
    v.status = RunFailureStatus(v.run);
    return;
  }
  if (!v.correct.ok) {
    v.status = VerdictStatus::kWrongAnswer;
    return;
  }

  // Gate 4: perf. Its baselines, if measured now, wait for the device alone
  // like the timed calls did: not in a run slot.
  run_slot.reset();
  v.status = VerdictStatus::kPass;
  if (options_.perf) JudgePerf(task, prepared, run, v);
}

namespace {

// anvil's own open-file limit: its soft limit raised to the hard one once;
// a hard limit below what each candidate process is promised (the sandbox's
// RLIMIT_NOFILE) would fail candidates for the machine's setting.
std::optional<std::string> TooFewDescriptors() {
  static const std::optional<std::string> why = []() -> std::optional<std::string> {
    struct rlimit files {};
    if (getrlimit(RLIMIT_NOFILE, &files) != 0) return std::nullopt;
    if (files.rlim_cur < files.rlim_max) {
      files.rlim_cur = files.rlim_max;
      (void)setrlimit(RLIMIT_NOFILE, &files);
    }
    const rlim_t promised = static_cast<rlim_t>(SandboxPolicy().max_open_files);
    if (files.rlim_max != RLIM_INFINITY && files.rlim_max < promised) {
      return "anvil may open only " + std::to_string(files.rlim_max) + " files (its hard RLIMIT_NOFILE), below the " +
             std::to_string(promised) +
             " each candidate process is promised: raise it before starting anvil (ulimit -n " +
             std::to_string(2 * promised) + ", or LimitNOFILE= in a service unit)";
    }
    return std::nullopt;
  }();
  return why;
}

}  // namespace

std::optional<std::string> NoRoomToJudge(const fs::path& cache_dir) {
  if (auto few = TooFewDescriptors()) return few;
  if (auto full = BelowFreeSpaceFloor(cache_dir, "the cache")) return full;
  std::error_code ec;
  return BelowFreeSpaceFloor(fs::temp_directory_path(ec), "the temporary folder");
}

RunRequest Evaluator::BaseRequest(const fs::path& candidate, const Verdict& v, const TorchInfo& torch) {
  RunRequest req;
  req.candidate = candidate;
  req.format = v.format;
  req.artifacts = v.compile.artifacts;
  req.extension_keys = v.compile.extension_keys;
  req.deadline = options_.run_deadline;
  req.torch = &torch;
  req.sandbox_switches = SandboxSwitches(torch);
  req.quota = options_.run_quota;
  return req;
}

TrialCompare Evaluator::ServerCompare(const Task& task, const PreparedTask& prepared) const {
  TrialCompare compare;
  compare.init_seed = PrepareOptions{}.init_seed;
  compare.reference_tf32 = options_.policy.reference_tf32;
  for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16, DType::kInt64, DType::kInt32,
                      DType::kInt16, DType::kInt8, DType::kUInt8, DType::kBool}) {
    const Tolerance tol = TrialTolerance(task, dtype, options_);
    compare.tolerance[std::string(DTypeName(dtype))] = {tol.atol, tol.rtol};
    compare.nan_equal = tol.nan_equal;
  }
  compare.atol_scale = prepared.atol_scale;
  return compare;
}

Evaluator::CheckedRun Evaluator::RunAndCheck(const Task& task, const PreparedTask& prepared, const TorchInfo& torch,
                                             const fs::path& candidate, const fs::path& work,
                                             const std::function<void()>& release_run_slot, Verdict& v) {
  RunRequest req = BaseRequest(candidate, v, torch);
  v.run.ran = true;
  v.correct.ran = true;
  v.correct.trials = prepared.trials;
  CheckedRun checked;
  auto infra = [&](const std::string& message) {
    v.error = message;
    v.status = VerdictStatus::kInfraError;
  };
  if (!prepared.damaged.empty()) {
    // Prepare always keeps its seeds and recipes: the folder was damaged since.
    infra("the prepared task " + prepared.dir.string() +
          " holds what anvil's task server cannot serve: " + prepared.damaged +
          ": remove that folder (or empty the cache: `anvil cache prune --max-size 0`) and evaluate "
          "again");
    v.infra_while_candidate = false;  // The cache's, whatever the candidate: not tried again.
    return checked;
  }
  req.prepared = prepared.dir;
  req.out_dir = work / (prepared.streamed ? std::string("got_0") : std::string("trials"));
  // The trials' inputs come from the task server (a session per run), which
  // also compares the trials' outputs: the candidate hands them back in
  // buffers of the server's (docs/protocol.md).
  RoomHold room;  // The session's room in the server's budget: given back after it closed.
  std::unique_ptr<TaskServer::Session> session;
  std::optional<TrialSessionEnd> ended;  // The session's last report, once the candidate has ended.
  auto server_report = [&] { return ended ? Result<TrialSessionEnd>(*ended) : session->Results(); };
  v.run.trial_data = "server";
  const bool held_out = !prepared.streamed && v.format == "kernelbench" && !prepared.held_out.empty();
  // The trials share the device; the timed calls get it alone (waiting for
  // it while the child waits). Released when the process has ended. Taken
  // before the task server's session opens: the server's work for it (the
  // task's inputs and reference made on the device) never overlaps another
  // candidate's timed calls or baselines. A task whose session does not fit
  // the server's budget (multi-GB trials) has the device alone throughout:
  // beside another session or a preparation the device refused the server
  // its buffers mid-run (bench/results/all_problems_h100_call4.md).
  auto server = [&] {
    StageClock clock(v, "make_trials");  // The server's start, for the first session.
    return TaskServer::For(backend_, options_.trial_server_budget);
  }();
  // What the session will hold in the server is reserved first, holding no
  // device: a session between its trials and its timed calls keeps its
  // trials there while another candidate has the device alone, so the device
  // gate alone let two multi-GB sessions overrun the budget and the device
  // (bench/results/throughput_h100_multigb.md).
  if (server.ok()) {
    room = server.value()->ReserveSession(prepared.trial_bytes);
    v.device_wait_seconds += room.waited();
  }
  std::optional<SharedDeviceHold> shared;
  bool exclusive = false;
  if (server.ok() && !server.value()->SessionFits(prepared.trial_bytes)) {
    v.device_wait_seconds += device_.AcquireExclusive();
    exclusive = true;
    v.run.device_alone = true;
  } else {
    shared.emplace(device_);
    v.device_wait_seconds += shared->waited();
  }
  {
    StageClock clock(v, "make_trials");
    TrialCompare compare = ServerCompare(task, prepared);
    if (held_out) compare.held_out = static_cast<int>(prepared.held_out.size());
    // The timed calls' input sets come from the server too, which writes
    // each call's set only after the worker said ready for it (on CUDA the
    // worker's timer then flushes the L2 after go, outside the call's trace
    // window). ANVIL_CUDA_SETS_WRITTEN=0 loads them before the warmup
    // instead on CUDA, to compare (bench/results/sets_written_h100.md).
    TimedSets sets;
    if (options_.perf) {
      sets.count = std::max(RecheckSets(prepared, options_), 1);
      sets.from = prepared.timing_sets > 0 ? "timing" : "trials";
      const char* cuda_written = std::getenv("ANVIL_CUDA_SETS_WRITTEN");
      sets.write =
          backend_.kind() == BackendKind::kCpu || cuda_written == nullptr || std::string_view(cuda_written) != "0";
    }
    auto opened = server.ok() ? server.value()->Open(task, prepared, &compare, &sets) : server.status();
    if (!opened.ok()) {
      infra(opened.message());
      return checked;
    }
    session = std::move(opened).value();
    req.data_fd = session->candidate_fd();
    req.trials_done = [&] {
      auto report = server_report();
      return report.ok() ? static_cast<int>(report.value().results.size()) : 0;
    };
    if (sets.write) {
      req.before_go = [&session](int call) { return session->WriteCall(call); };
      checked.sets_written = true;
    }
    if (sets.count > 0) {
      req.before_recheck = [&session](uint64_t seed) { return session->Recheck(seed, kRecheckSample); };
    }
  }
  bool compared = false;
  auto compare = [&] {
    // Compared by the server as the candidate handed them over.
    StageClock clock(v, "compare");
    auto report = server_report();
    if (!report.ok() || !report.value().error.empty()) {
      v.error = "anvil's task server failed while the candidate ran (not the candidate's doing): " +
                (report.ok() ? report.value().error : report.message());
    } else {
      v.correct.details = TrialChecksFromServer(report.value().results, prepared.trials);
      if (held_out) {
        v.correct.held_out = TrialChecksFromServer(report.value().held_out, static_cast<int>(prepared.held_out.size()));
      }
    }
    // Catalog C1: the same model on shapes the benchmark does not show.
    if (held_out) v.correct.held_out_sets = prepared.held_out;
    compared = true;
  };
  double gate_seconds = 0;
  double timed_wait = 0;  // The timed calls' wait for the device alone: a queue, not the perf stage.
  if (options_.perf) {
    // Gate 4 follows in the same process, but only for a candidate whose
    // every trial is written, right and free of torch compute: the trials
    // are compared while the child waits.
    req.warmup = options_.warmup;
    req.iters = options_.iters;
    req.recheck_sets = RecheckSets(prepared, options_);
    req.time_after_trials = [&](const RunOutcome& trials) {
      const auto t0 = std::chrono::steady_clock::now();
      compare();
      bool right = v.error.empty();
      for (const TrialCheck& t : v.correct.details) right = right && t.ok;
      for (const TrialCheck& t : v.correct.held_out) right = right && t.ok;
      gate_seconds = Seconds(t0);
      const bool time_them = right && trials.trials_completed == prepared.trials && trials.message.empty() &&
                             (trials.aten_compute.empty() || options_.policy.Allows("run.aten_compute")) &&
                             trials.host_compute.empty();
      shared.reset();
      if (time_them && !exclusive) {
        if (!prepared.streamed) release_run_slot();
        timed_wait = device_.AcquireExclusive();
        v.device_wait_seconds += timed_wait;
        exclusive = true;
      }
      return time_them;
    };
  }
  auto run = InjectedInfraFault(candidate)
                 ? Result<RunOutcome>(Status::MachineError("a fault injected by ANVIL_INJECT_INFRA (docs/verdict.md)"))
                 : RunCandidate(backend_, req, prepared.trials);
  shared.reset();
  if (exclusive) device_.ReleaseExclusive();
  // The candidate's processes have ended: what the server did for them.
  auto end = session->Close();
  room.Reset();  // The server has let go of what the session held.
  if (!end.ok() || !end.value().error.empty()) {
    infra("anvil's task server failed while the candidate ran (not the candidate's doing): " +
          (end.ok() ? end.value().error : end.message()));
    return checked;
  }
  ended = std::move(end).value();
  v.work_seconds["server"] += ended->work_ms / 1000;
  v.server_wait_seconds += ended->waited_ms / 1000;
  if (req.before_recheck) checked.server_rechecks = ended->rechecks;
  if (!run.ok()) {
    infra("running the candidate: " + run.message());
    return checked;
  }
  if (!run.value().timed.infra.empty()) {
    infra("anvil failed between two timed calls (not the candidate's doing): " + run.value().timed.infra);
    return checked;
  }
  if (const RunOutcome& r = run.value(); !r.ok && !r.device_memory_over && r.device_others_peak_bytes > 0 &&
                                         SaysDeviceOutOfMemory(r.message + "\n" + r.stderr_tail)) {
    // The candidate's words alone make no infra_error: the driver saw
    // another process's memory on the device. Where the failure recurs
    // alone on an idle device, it is the candidate's (pipeline/infra_retry.cc).
    v.device_busy = true;
    infra("the device ran out of memory while processes other than the candidate's held up to " +
          std::to_string(r.device_others_peak_bytes >> 20) + " MiB of it (" + r.device_others +
          "): not the candidate's doing. The candidate said: " + r.message.substr(0, 300));
    return checked;
  }
  RunOutcome trials = run.value();
  // Outputs that changed in the server's buffers after the worker handed them over (run.after_return).
  trials.after_return.insert(trials.after_return.end(), ended->after_return.begin(), ended->after_return.end());
  if (trials.timed.calls_started) {
    // Every trial was written and right before the timed calls began: what
    // went wrong after them belongs to gate 4.
    checked.timed = trials;
    checked.timed->seconds -= trials.trials_seconds + gate_seconds + timed_wait;
    trials.ok = true;
    trials.timed_out = false;
    trials.exit_code = 0;
    trials.term_signal = 0;
    trials.stage = trials.message = trials.traceback = "";
    trials.seconds = trials.trials_seconds;
    v.stage_seconds["perf"] += checked.timed->seconds;
  } else if (!trials.timed.violation.empty()) {
    checked.timed = trials;  // The channel was abused during the trials: gate 4 judges it.
  }
  // The comparison made while the child waited is the compare stage's, not the run's.
  const bool waited = !trials.timed.calls_started && trials.timed.trials_announced;
  v.stage_seconds["run"] += trials.seconds - (waited ? gate_seconds : 0);
  FromRun(trials, v.run);
  QuotasFrom(trials, v);
  v.run.trials_completed += trials.trials_completed;
  // Compare what was written, also after a crash (for the record).
  if (!compared) compare();
  checked.out_dir = req.out_dir;
  FinishCorrectness(v);
  return checked;
}

}  // namespace anvil
