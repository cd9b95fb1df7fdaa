// Gate 4 of the evaluator: the timed calls (made through anvil's call clock by
// the process that ran the trials), the re-check of their outputs, the
// judgements on their times (call clock, roofline floor), then the baselines.
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

#include "integrity/kernel_trace.h"
#include "integrity/symbol_scan.h"
#include "pipeline/evaluator.h"  // Evaluator::JudgePerf is defined here.
#include "pipeline/runtime_outcome.h"
#include "pipeline/server_trials.h"
#include "pipeline/stage_clock.h"
#include "run/call_clock.h"
#include "run/candidate_run.h"
#include "tasks/task_server.h"
#include "verify/feedback.h"
#include "verify/roofline.h"

namespace anvil {
namespace fs = std::filesystem;

int RecheckSets(const PreparedTask& prepared, const EvalOptions& options) {
  if (prepared.streamed) return 0;
  if (prepared.timing_sets > 0) return std::min(prepared.timing_sets, options.iters);
  return std::min(prepared.trials, options.warmup + options.iters);
}

namespace {

// The kernel trace the candidate's process wrote, judged against the kernels
// its build defines (CUDA only; integrity/kernel_trace.h).
std::vector<RuleHit> TraceHits(const Backend& backend, const fs::path& out_dir,
                               const std::map<std::string, std::string>& artifacts, const std::vector<double>& event_ms,
                               TraceEvidence& evidence) {
  std::string why_not;
  if (KernelTraceLibrary(backend, &why_not).empty()) {
    evidence.error = why_not;
    return {};
  }
  auto trace = ReadKernelTrace(out_dir / "kernel_trace.tsv");
  if (!trace.ok()) {
    evidence.error = "the candidate's process left no readable kernel trace: " + trace.message();
    return {};
  }
  std::vector<std::string> defined;
  for (const auto& [name, path] : artifacts) {
    auto functions = DefinedFunctions(path);
    if (!functions.ok()) {
      evidence.error = "the kernels of " + name + " are not known: " + functions.message();
      return {};
    }
    defined.insert(defined.end(), functions.value().begin(), functions.value().end());
  }
  return JudgeKernelTrace(trace.value(), OwnKernels(defined), event_ms, evidence);
}

// The calls whose times count: those the kernel trace left alone (it slows
// kernels by ~1-3 %), or all of them when every call was traced.
ClockedCalls UntracedCalls(const ClockedCalls& timed) {
  if (timed.traced == 0) return timed;
  ClockedCalls kept = timed;
  kept.event_ms.clear();
  kept.wall_ms.clear();
  kept.queued_ms.clear();
  const bool queued = timed.queued_ms.size() == timed.wall_ms.size();
  for (std::size_t k = 0; k < timed.event_ms.size() && k < timed.wall_ms.size(); ++k) {
    if (k < 64 && (timed.traced >> k & 1)) continue;
    kept.event_ms.push_back(timed.event_ms[k]);
    kept.wall_ms.push_back(timed.wall_ms[k]);
    if (queued) kept.queued_ms.push_back(timed.queued_ms[k]);
  }
  return kept.event_ms.empty() ? timed : kept;
}

}  // namespace

Result<std::string> Evaluator::ServerBaseline(const Task& task, const PreparedTask& prepared, BaselineMode mode,
                                              const BaselineOptions& options, const BaselineHooks& hooks) {
  auto server = TaskServer::For(backend_, options_.trial_server_budget);
  if (!server.ok()) return server.status();
  const auto deadline = std::chrono::duration_cast<std::chrono::milliseconds>(options.deadline);
  if (hooks.before_start) hooks.before_start();
  auto set_up =
      server.value()->SetUpBaseline(task, prepared, ServerCompare(task, prepared), BaselineModeName(mode), deadline);
  if (!set_up.ok()) return set_up.status();
  nlohmann::json out = {{"mode", BaselineModeName(mode)}, {"times_ms", nlohmann::json::array()}, {"error", nullptr}};
  std::string failed = set_up.value().failed;  // The reference's own failure, at either step.
  nlohmann::json phases = set_up.value().phases_ms;
  if (failed.empty()) {
    if (mode == BaselineMode::kCompile) {
      out["compile_seconds"] = set_up.value().compile_seconds;
      if (set_up.value().compile_graphs >= 0) out["compile_graphs"] = set_up.value().compile_graphs;
    }
    if (hooks.before_timing) hooks.before_timing();
    auto timed = server.value()->TimeBaseline(set_up.value().id, options.warmup, options.iters, deadline);
    if (!timed.ok()) return timed.status();
    out["times_ms"] = timed.value().times_ms;
    failed = timed.value().failed;
    // Both steps may say a phase (`wait`): their sum.
    for (const auto& [phase, ms] : timed.value().phases_ms.items()) {
      phases[phase] = phases.contains(phase) && phases[phase].is_number() && ms.is_number()
                          ? nlohmann::json(phases[phase].get<double>() + ms.get<double>())
                          : ms;
    }
  }
  if (!failed.empty()) out["error"] = failed;
  if (!phases.empty()) out["phases_ms"] = phases;
  return out.dump();
}

void Evaluator::JudgePerf(const Task& task, const PreparedTask& prepared, const CheckedRun& checked, Verdict& v) {
  PerfGate& p = v.perf;
  p.warmup = options_.warmup;
  p.iters = options_.iters;
  if (!checked.timed) {
    // The trials passed, yet the child never took its timed calls.
    v.run.ok = false;
    v.run.stage = "perf: exit";
    v.run.message = "the candidate's process ended after its trials without taking its timed calls";
    v.status = VerdictStatus::kRuntimeError;
    p.skipped = "the candidate was not timed";
    return;
  }
  const RunOutcome& run = *checked.timed;
  const int recheck_sets = RecheckSets(prepared, options_);
  p.timing_sets = prepared.timing_sets > 0 ? recheck_sets : 0;
  p.timed_inputs = checked.sets_written ? "written_after_ready" : "preloaded";
  // The times themselves: anvil clocked every call (catalog D1, D5). A broken
  // protocol is a cheat even when the child then failed (it cannot go on).
  const ClockedCalls& timed = run.timed;
  const bool cpu = backend_.kind() == BackendKind::kCpu;
  const std::optional<ClockFinding> clock_finding =
      JudgeClock(timed, cpu ? kHiddenFloorMsCpu : kHiddenFloorMsDevice, cpu);
  auto clock_cheat = [&] {
    RuntimeCheat(v, clock_finding->rule, clock_finding->message, "the timed calls' times cannot be trusted");
  };
  if (!timed.violation.empty()) {
    FromRun(run, v.run);
    QuotasFrom(run, v);
    clock_cheat();
    return;
  }
  if (!run.ok) {
    FromRun(run, v.run);
    QuotasFrom(run, v);
    if (v.run.term_signal == SIGSYS) {
      SandboxViolation(v, "while it was timed");
      return;
    }
    v.run.stage = "perf: " + v.run.stage;
    v.status = RunFailureStatus(v.run);
    p.skipped = "the candidate failed while being timed";
    return;
  }
  v.run.seconds += run.seconds;
  // Outputs of timed calls must still be right: a kernel that replays,
  // batches or detects the timing phase is caught here (catalog B2, B3, C4).
  // A random sample of the sets, drawn by anvil after the last call: the
  // child kept every set's last output and wrote only these (catalog C4: no
  // call knew whether it would be looked at).
  p.rechecked = RecheckSample(recheck_sets, kRecheckSample, timed.recheck_seed);
  // Compared by the task server as the worker handed them over.
  std::vector<TrialCheck> rechecks;
  if (checked.server_rechecks) {
    const std::vector<TrialCheck> by_set = TrialChecksFromServer(*checked.server_rechecks, recheck_sets);
    for (int k : p.rechecked) rechecks.push_back(by_set[static_cast<std::size_t>(k)]);
  }
  for (std::size_t i = 0; i < rechecks.size(); ++i) {
    const int k = p.rechecked[i];
    const TrialCheck& t = rechecks[i];
    if (t.ok) continue;
    RuntimeCheat(v, "perf.recheck",
                 "while being timed, the output for input set " + std::to_string(k) +
                     " no longer matched the reference although every correctness trial did: the kernel replays, "
                     "batches or detects the timing phase (or is nondeterministic). Its last output for that set: " +
                     MismatchText(t),
                 "outputs of timed calls were wrong");
    return;
  }
  // Whose kernels ran in each call, where, and whether the events saw them.
  std::vector<RuleHit> trace_hits;
  if (!cpu) {
    StageClock clock(v, "trace");
    trace_hits = TraceHits(backend_, checked.out_dir, v.compile.artifacts, timed.event_ms, p.trace);
  }
  bool trace_cheat = false;
  for (RuleHit& hit : trace_hits) {
    trace_cheat =
        RuntimeCheat(v, std::move(hit), "the kernel trace contradicts what the timed calls claim") || trace_cheat;
  }
  if (clock_finding) clock_cheat();
  if (clock_finding || trace_cheat) return;
  p.ran = true;
  const ClockedCalls counted = UntracedCalls(timed);
  // On a CPU, anvil's own wall clock bounds a call's time from below (run/call_clock.h, CpuCallTimes).
  p.candidate = ComputeStats(cpu ? CpuCallTimes(counted) : counted.event_ms);
  p.wall = ComputeStats(counted.wall_ms);
  p.untimed_ms = MedianUntimedMs(counted);
  if (!counted.queued_ms.empty()) p.queued_ms = ComputeStats(counted.queued_ms).median_ms;
  // Catalog D8: faster than the outputs can even be written.
  if (!cpu) {
    const int64_t out_bytes = SpecOutputBytes(prepared.spec_json);
    const double peak = PeakMemoryBandwidthGBs(backend_.DeviceModel());
    p.floor_ms = RooflineFloorMs(out_bytes, peak);
    if (p.floor_ms > 0 && p.candidate.median_ms < p.floor_ms) {
      char buf[320];
      std::snprintf(buf, sizeof buf,
                    "the median timed call took %.4g ms, but writing its %.3g MB of outputs takes at least %.4g ms "
                    "on a %s (%.0f GB/s peak, with %.0fx slack for caches): the time is impossible",
                    p.candidate.median_ms, static_cast<double>(out_bytes) / 1e6, p.floor_ms,
                    backend_.DeviceModel().c_str(), peak, kRooflineSlack);
      RuntimeCheat(v, "perf.impossible_time", buf, "the timed calls' times are physically impossible");
      return;
    }
  }
  BaselineOptions bo;
  bo.warmup = options_.warmup;
  bo.iters = options_.iters;
  bo.reference_tf32 = options_.policy.reference_tf32;
  const char* worker = std::getenv("ANVIL_BASELINE_WORKER");
  if (worker == nullptr || std::string_view(worker) != "1") {
    // The task server times it: the reference it keeps, warm, on the device
    // already (no worker's start, no model built again). ANVIL_BASELINE_WORKER=1
    // times it in a worker of its own, to compare.
    bo.measure = [&](BaselineMode mode, const BaselineHooks& hooks) {
      return ServerBaseline(task, prepared, mode, bo, hooks);
    };
  }
  auto measure = [&](BaselineMode mode, std::optional<TimingStats>& stats, std::string& error, double& speedup) {
    // A baseline to measure is set up beside other work on the device (its
    // worker's start, the model, its inputs) and timed alone; reading one
    // needs no device.
    std::optional<SharedDeviceHold> shared;
    std::optional<ExclusiveDeviceHold> alone;
    RoomHold room;  // A baseline the server times holds its tensors there, set up to timed (as a session does).
    double waited = 0;
    BaselineHooks hooks;
    hooks.before_start = [&] {
      if (bo.measure) {
        if (auto server = TaskServer::For(backend_, options_.trial_server_budget); server.ok()) {
          room = server.value()->ReserveBaseline(prepared.trial_bytes);
          waited += room.waited();
        }
      }
      waited += shared.emplace(device_).waited();
    };
    hooks.before_timing = [&] {
      shared.reset();
      waited += alone.emplace(device_).waited();
    };
    const auto start = std::chrono::steady_clock::now();
    Baseline b = MeasureBaseline(task, prepared, backend_, mode, bo, hooks);
    alone.reset();
    shared.reset();
    room.Reset();
    v.device_wait_seconds += waited;
    // The waits are device_wait_seconds, not the stage's.
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() - waited;
    v.stage_seconds["baselines"] += seconds;
    if (!b.cached) {
      v.work_seconds["baselines"] += b.work_seconds;
      v.baseline_compile_seconds += b.compile_seconds;
      // The server's phases, and the rest of the stage beside them and the
      // compile: anvil's own side (messages, the baseline's file, the holds).
      double said = b.compile_seconds;
      for (const auto& [phase, s] : b.phase_seconds) {
        v.baseline_phase_seconds[phase] += s;
        said += s;
      }
      if (!b.phase_seconds.empty()) v.baseline_phase_seconds["anvil"] += std::max(0.0, seconds - said);
      if (const auto wait = b.phase_seconds.find("wait"); wait != b.phase_seconds.end()) {
        v.server_wait_seconds += wait->second;
      }
    }
    stats = b.stats;
    error = b.error;
    if (mode == BaselineMode::kCompile) p.compile_graphs = b.compile_graphs;
    if (stats && p.candidate.median_ms > 0) speedup = stats->median_ms / p.candidate.median_ms;
  };
  if (options_.baseline_eager) measure(BaselineMode::kEager, p.eager, p.eager_error, p.speedup_eager);
  if (options_.baseline_compile) measure(BaselineMode::kCompile, p.compile, p.compile_error, p.speedup_compile);
}

}  // namespace anvil
