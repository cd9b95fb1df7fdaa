// Starting anvil's Python workers (python/anvil_py) as child processes: the
// interpreter, PYTHONPATH and the environment every worker gets. Whether the
// worker is trusted (task side) or not (candidate side) is the caller's
// business; this only builds the ProcessSpec. Thread-safe.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "core/subprocess.h"

namespace anvil {

// `python -m anvil_py.<module> args...` with PYTHONPATH set to anvil's
// package, and ANVIL_TIMER_LIB to the compiled timer when there is one.
ProcessSpec PythonWorkerSpec(const std::string& module, const std::vector<std::string>& args);

// libanvil_timer.so (src/run/call_timer.cc), the timed call in compiled code:
// $ANVIL_TIMER_LIB, else the one next to this executable; empty when missing.
std::filesystem::path TimerLibrary();

// libanvil_ops.so (src/integrity/op_observer.cc), the op observer of
// kernelbench candidates: $ANVIL_OPS_LIB, else the one next to this
// executable; empty when missing (torch was not found at build time).
std::filesystem::path OpsLibrary();

// The last `max_lines` lines of `text` (for stderr tails and tracebacks).
std::string TailLines(const std::string& text, int max_lines);

// Why a worker stopped as not ready (ProcessResult::not_ready) was not given
// its work: `what` names it ("the candidate's worker was not ready to load
// it"), the rest says how long it had, what to suspect and its output's tail.
std::string NotReadyProblem(const std::string& what, const ProcessSpec& spec, const ProcessResult& result);

}  // namespace anvil
