// Gate 1 (run): the candidate's code runs only in a child process — the
// candidate worker — with a deadline that kills its whole process group. Its
// crash, exception, exit or hang is captured as data; the parent never dies
// with it. One process runs the correctness trials and, when the caller says
// so once they are written, the timed calls (gate 4): the model is built and
// torch and CUDA start once per candidate, not once per phase.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "backend/torch_info.h"
#include "core/cgroup.h"
#include "core/status.h"
#include "run/call_clock.h"

namespace anvil {

struct RunOutcome {
  // Exited 0 and wrote what it promised: every trial's outputs and, when they
  // started, every timed call's time.
  bool ok = false;
  bool timed_out = false;
  int exit_code = 0;
  int term_signal = 0;
  double seconds = 0;
  uint32_t sandbox_layers = 0;  // SandboxLayer bits that took effect.
  std::string stage;            // From error.json: import, init, forward, output, native, ...
  std::string message;
  std::string traceback;
  std::string stderr_tail;
  int trials_completed = 0;  // Trials whose outputs were written.
  // The timed calls, through anvil's clock (timed.calls_started: they ran).
  ClockedCalls timed;
  double ready_seconds = 0;   // From the start until the worker was ready to load the candidate.
  double trials_seconds = 0;  // From the start to the trials' announcement (timed calls ran).
  // Kernelbench format: the aten compute ops the trials' forwards dispatched,
  // and the tensor data they handed to Python or numpy (out_dir/aten_ops.json,
  // docs/protocol.md).
  std::vector<std::string> aten_compute;
  std::vector<std::string> host_compute;
  std::string compute_seen_in;  // Where either was seen first: "trial 0", "timed call 3".
  // From out_dir/tamper.json and the report channel: what the candidate
  // replaced (RunGate::tampered).
  std::vector<std::string> tampered;
  // Files the worker wrote that do not match their seals on the report
  // channel, or that it never wrote (RunGate::forged; run/worker_report.h).
  std::vector<std::string> forged;
  // What the worker saw change in a timed call's outputs after the call had
  // returned (RunGate::after_return).
  std::vector<std::string> after_return;
  // From out_dir/timeline.json: the child's own phases (RunGate::phase_seconds).
  std::map<std::string, double> phase_seconds;
  // The quotas the run had (RunRequest::quota; zeros: none) and what the
  // kernel counted against them.
  JobQuota quota;
  // The device memory its processes held together at most (a watched cuda
  // run), and whether that passed the quota (anvil killed them then).
  std::uint64_t device_memory_peak_bytes = 0;
  bool device_memory_over = false;
  // What other processes on the device held at most meanwhile (but anvil's
  // planned ones, run/device_memory.h), and who they were then.
  std::uint64_t device_others_peak_bytes = 0;
  std::string device_others;
  JobUsage usage;
};

struct RunRequest {
  std::filesystem::path candidate;
  std::string format;                                 // "kernelbench" | "native"
  std::filesystem::path prepared;                     // PreparedTask::dir
  std::map<std::string, std::string> artifacts;       // From the compile gate.
  std::map<std::string, std::string> extension_keys;  // Likewise (CompileResult::extension_keys).
  // Set: once the child has written every trial, this decides (it may compare
  // them) whether its timed calls follow, through anvil's call clock; they get
  // a deadline of their own. Unset: the child stops after the trials.
  std::function<bool(const RunOutcome& trials)> time_after_trials;
  int warmup = 3;
  int iters = 20;
  // Rotate the timed calls through this many input sets; the task server
  // rechecks the last output of the sets anvil draws (0: one set, none).
  int recheck_sets = 0;
  std::chrono::milliseconds deadline{120000};  // For the trials, and again for the timed calls.
  std::filesystem::path out_dir;  // Created; the worker's files land here; the candidate's only writable folder.
  // The candidate's end of a task server session (tasks/task_server.h): its
  // trials' inputs come from there instead of the prepared folder; -1: none.
  int data_fd = -1;
  // How many trials the candidate has handed over (the task server's session
  // takes its outputs, tasks/task_server.h); unset: none.
  std::function<int()> trials_done;
  // Set: runs for each timed call after the child said it is ready and
  // before anvil starts the call (CallClock::BeforeGo).
  std::function<Status(int call)> before_go;
  // Set: runs after the last timed call with the recheck's seed, before the
  // child hears it (CallClock::BeforeRecheck).
  std::function<Status(uint64_t seed)> before_recheck;
  const TorchInfo* torch = nullptr;  // Import paths for the sandbox; required.
  std::string sandbox_switches;      // As in CandidateAccess::switches.
  // The candidate's processes' quotas (core/cgroup.h); zeros: none. One that
  // cannot be kept here is an error (anvil's), never an unlimited run.
  JobQuota quota;
};

// The kernel trace's recorder (libanvil_trace.so: next to anvil, or
// $ANVIL_TRACE_LIB) when a CUDA run should load it; otherwise empty, with
// `why_not` saying why (turned off by ANVIL_KERNEL_TRACE=0, or not built).
std::filesystem::path KernelTraceLibrary(const Backend& backend, std::string* why_not);

// Error only for anvil's own failures (cannot start the worker, cannot write
// the build map).
Result<RunOutcome> RunCandidate(const Backend& backend, const RunRequest& request, int expected_trials);

}  // namespace anvil
