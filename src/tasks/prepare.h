// prepare(task), the trusted first step of every evaluation (DESIGN.md): the
// spec, secret trial seeds, inputs and reference outputs for each trial and
// for the timed calls, and
// the eager / torch.compile baseline times. Everything is made by the task
// worker (reference code only, never candidate code) and cached on disk per
// (task content, backend, device model, torch version, trial count). Concurrent callers for
// the same task are safe: the first to finish publishes the entry atomically.
// A prepared folder is marked as used (its mtime) each time it is found, and
// held (a shared lock on it) while a PreparedTask for it lives, so that `anvil
// cache prune` neither evicts it as idle nor removes it under a running eval.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "core/stats.h"
#include "core/status.h"
#include "tasks/task.h"

namespace anvil {

class FileLock;

struct PrepareOptions {
  std::filesystem::path cache_dir;     // Required.
  int trials = 5;                      // Correctness trials (fresh inputs each).
  int init_seed = 42;                  // Seed for Model/ModelNew construction.
  std::chrono::seconds deadline{900};  // For the task worker.
  // Above this many bytes of inputs + outputs per trial, the task server
  // keeps no trial warm: each is made when the candidate needs it (streamed).
  int64_t max_trial_bytes = int64_t{1} << 30;
  // Timed calls (cached tasks): input sets of their own, made from secret
  // seeds no trial uses, each with its reference outputs, so that no timed
  // call sees values seen before (catalog B2: a cache keyed on input values
  // replays nothing). `timing_sets` for one set per timed call; fewer when
  // they do not fit in max_timing_bytes, but never fewer than half of them
  // plus one while they fit in 4x that (the median then comes from first
  // sights), and at least one.
  int timing_sets = 0;
  int64_t max_timing_bytes = int64_t{1} << 30;
  // The verdict policy's id (verify/policy.h): part of the key, since a
  // policy decides how the reference computes (TF32) and what its spec holds.
  std::string policy = "musacoder/1";
  // The reference computes with torch's default TF32 settings (Policy::
  // reference_tf32) instead of exact fp32.
  bool reference_tf32 = false;
  // The trivial-output guard's tolerances (python/anvil_py/trivial_guard.py):
  // JSON {"tolerance": {dtype: [atol, rtol]}, "nan_equal": bool}; "" for none.
  std::string guard;
  // Called once before the task worker starts (never for a folder found in
  // the cache, which needs no device): where preparations take turns on the
  // device, it waits for this one's.
  std::function<void()> before_device;
};

struct PreparedTask {
  std::filesystem::path dir;  // Holds spec.json, the weights, the trials' and timing sets' seeds.
  std::string spec_json;      // Contents of spec.json.
  int trials = 0;
  bool cached = false;  // Found in the cache rather than made now.
  double seconds = 0;   // Time spent preparing now (0 when cached).
  // Of that, the device's work (spec.json "work_ms": the reference's inputs,
  // its runs; CUDA events around each, on the cpu their time); 0 when cached.
  double work_seconds = 0;
  // Streamed: trials too large to keep prepared (max_trial_bytes); the task
  // server makes trial k from seeds[k] whenever a candidate needs it.
  bool streamed = false;
  std::vector<std::string> seeds;
  int64_t trial_bytes = 0;  // Streamed: inputs + outputs of one trial.
  // Timing sets (0: none; the timed calls then use the trials' input sets):
  // the task server makes set K from timing_seeds[K].
  int timing_sets = 0;
  std::vector<std::string> timing_seeds;
  // Held-out sets, made by the task server (catalog C1; Task::held_out_json): what each
  // set changed, e.g. "batch_size=5". None for streamed tasks.
  std::vector<std::string> held_out;
  // What of the folder is missing or damaged, e.g. "kept_seeds.json is missing
  // or damaged" (empty: nothing found): the task server cannot serve it.
  std::string damaged;
  // The trivial-output guard (spec.json "trivial_guard", "degenerate"): by
  // output name, the factor its atol is scaled by; and, for a task no check
  // tells from a trivial output, which ("out0: zeros").
  std::map<std::string, double> atol_scale;
  std::string degenerate;
  // A shared lock on `dir`, released with the last copy of this object.
  std::shared_ptr<const FileLock> in_use;
  // Set by the evaluator: when the preparation began to wait for its turn on
  // the device (one preparation at a time, none under a timed call) and when
  // it got it. In a batch the wait is a queue, not this task's preparation.
  std::chrono::steady_clock::time_point turn_asked, turn_given;
};

// The lock file preparers of the prepared folder `dir` hold (beside it).
std::filesystem::path PreparedTaskLockPath(const std::filesystem::path& dir);

// What Model and ModelNew are built with (get_init_inputs() under
// `options.init_seed`) in a JSON file {init_inputs, init_seed}: made on the
// CPU by the task worker, no device needed, and cached beside the prepared
// folders (tasks/<name>-<hash>.init.json). A candidate's sources are
// extracted with it while the reference is prepared on the device. Errors as
// PrepareTask's.
Result<std::filesystem::path> TaskInitArgs(const Task& task, const std::string& torch_version,
                                           const PrepareOptions& options);

// Error (with the stage and the traceback's last lines) when the task does not
// import, lacks Model/get_inputs/get_init_inputs, or its code fails.
Result<PreparedTask> PrepareTask(const Task& task, const Backend& backend, const std::string& torch_version,
                                 const PrepareOptions& options);

enum class BaselineMode { kEager, kCompile };

struct BaselineHooks;

// A baseline measured by other means than the baseline worker (the task
// server's: pipeline/perf_gate.cc): the worker's JSON ({"mode", "times_ms",
// "error", "compile_seconds"}; "error" the reference's own failure, kept like
// a time), or an error status (nothing kept). It calls the hooks as the
// worker's run does.
using BaselineMeasure = std::function<Result<std::string>(BaselineMode mode, const BaselineHooks& hooks)>;

struct BaselineOptions {
  int warmup = 3;
  int iters = 20;
  bool reference_tf32 = false;  // As the task was prepared (PrepareOptions).
  std::chrono::seconds deadline{900};
  BaselineMeasure measure;  // Empty: the baseline worker (task_worker baseline).
};

struct Baseline {
  std::optional<TimingStats> stats;  // Absent when the baseline could not run.
  std::string error;                 // Why it could not run.
  bool cached = false;
  double compile_seconds = 0;  // torch.compile's first-call cost.
  // The graphs dynamo compiled for it (0: nothing new, e.g. the model run
  // eagerly); -1: not said. Kept with the baseline, so cached ones say it too.
  int compile_graphs = -1;
  // Measured now (not cached): the device's work of its calls, the timed
  // ones' event times plus each warmup call at their median.
  double work_seconds = 0;
  // Measured now by the task server: where its time went, by phase
  // (ServerBaseline::phases_ms, in seconds).
  std::map<std::string, double> phase_seconds;
};

// How a measurement holds the device (pipeline/device_gate.h), when it has
// to measure: `before_start` runs before its worker starts (the set-up, the
// model built and its inputs loaded, shares the device), `before_timing` once
// the worker is set up and waits to time (on another thread; the timed calls
// get the device alone). Either may block; an empty one is skipped, and
// without `before_timing` the worker times as soon as it is set up.
struct BaselineHooks {
  std::function<void()> before_start;
  std::function<void()> before_timing;
};

// Times the reference (eager or torch.compile) on trial 0's inputs, cached in
// the prepared directory. Never fails: problems are reported in Baseline::error.
Baseline MeasureBaseline(const Task& task, const PreparedTask& prepared, const Backend& backend, BaselineMode mode,
                         const BaselineOptions& options, const BaselineHooks& hooks = {});

const char* BaselineModeName(BaselineMode mode);

}  // namespace anvil
