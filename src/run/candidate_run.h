// Gate 1 (run): the candidate's code runs only in a child process — the
// candidate worker — with a deadline that kills its whole process group. Its
// crash, exception, exit or hang is captured as data; the parent never dies
// with it. One call runs one phase (the correctness trials, or timing).
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "backend/torch_info.h"
#include "core/status.h"
#include "run/call_clock.h"

namespace anvil {

enum class RunPhase { kTrials, kPerf };

struct RunRequest {
  std::filesystem::path candidate;
  std::string format;                            // "kernelbench" | "native"
  std::filesystem::path prepared;                // PreparedTask::dir
  std::map<std::string, std::string> artifacts;  // From the compile gate.
  RunPhase phase = RunPhase::kTrials;
  int warmup = 3;  // kPerf only.
  int iters = 20;  // kPerf only.
  // kPerf: rotate the timed calls through this many trial input sets and
  // write each set's last output to out_dir/recheck_K (0: one set, no outputs).
  int recheck_sets = 0;
  std::chrono::milliseconds deadline{120000};
  std::filesystem::path out_dir;     // Created; outputs land here; the candidate's only writable folder.
  const TorchInfo* torch = nullptr;  // Import paths for the sandbox; required.
  std::string sandbox_switches;      // As in CandidateAccess::switches.
};

struct RunOutcome {
  bool ok = false;  // Exited 0 and wrote what the phase promises.
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
  ClockedCalls timed;        // kPerf: the timed calls, through anvil's clock.
  // kTrials, kernelbench format: the aten compute ops trial 0's forward
  // dispatched (out_dir/aten_ops.json, docs/protocol.md).
  std::vector<std::string> aten_compute;
};

// Error only for anvil's own failures (cannot start the worker, cannot write
// the build map).
Result<RunOutcome> RunCandidate(const Backend& backend, const RunRequest& request, int expected_trials);

}  // namespace anvil
