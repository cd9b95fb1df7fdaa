// How what happened in a candidate's process lands in its verdict: the run
// gate from a RunOutcome, and runtime evidence that decides a `cheat` (used by
// the evaluator's run and perf gates).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "integrity/rule_hit.h"
#include "run/candidate_run.h"
#include "verify/verdict.h"

namespace anvil {

// Adds one run (a phase) to the run gate.
void FromRun(const RunOutcome& r, RunGate& g);
// The run's quotas that were in force, in the verdict's `quotas`.
void QuotasFrom(const RunOutcome& r, Verdict& v);

// The hit is recorded and the candidate is a cheat; `skipped` says why no
// timing follows. Unless the verdict's policy allows the rule: then the hit
// is recorded as evidence and nothing else changes. Whether it was a cheat.
bool RuntimeCheat(Verdict& v, RuleHit hit, const char* skipped);
// The same for a hit of severity cheat from runtime evidence.
bool RuntimeCheat(Verdict& v, std::string rule, std::string message, const char* skipped);

// run.tamper from v.run.tampered: what the worker's fingerprints (or the
// compiled timer's fault handler) found replaced, and when.
void TamperCheat(Verdict& v);

// What the worker found and reported about the candidate's run that makes it
// a cheat, in this order: tampering, files forged after the worker sealed
// them, outputs changed after a timed call returned, then the forward traces
// (ForwardTraceCheat). Whether one did.
bool WorkerFindingsCheat(Verdict& v);

// Kernelbench format: the trials and the watched timed calls ran under the
// aten and host traces; torch compute (run.aten_compute) or tensor data
// handed to Python or numpy (run.host_compute) there makes the candidate a
// cheat. Whether it did.
bool ForwardTraceCheat(Verdict& v);

// The kernel killed a candidate process for a forbidden system call: an
// attempt to leave the sandbox.
void SandboxViolation(Verdict& v, const std::string& when);

// timeout or runtime_error.
VerdictStatus RunFailureStatus(const RunGate& g);

// Below this much free room a failed run may have failed for want of disk
// (ENOSPC writing its outputs): anvil's problem, not the candidate's.
inline constexpr std::uintmax_t kDiskLowBytes = std::uintmax_t{1} << 30;

// Why a run that failed (not by its deadline) is anvil's fault rather than
// the candidate's: `free` bytes were left on the disk under its folder
// `work`, and the folder holds `work_bytes` — within what the task's own data
// (`task_bytes`) explains, so the candidate did not fill the disk itself (one
// that does, to turn its failure into a neutral infra_error, keeps its
// verdict). nullopt: not the disk.
std::optional<std::string> DiskFullProblem(const std::filesystem::path& work, std::uintmax_t free,
                                           std::uintmax_t work_bytes, std::uintmax_t task_bytes);

}  // namespace anvil
