// The sandbox policy for processes that run candidate code (extraction and
// the run gate): the system's libraries, the interpreter's import paths, the
// GPU device files, and exactly the files this job needs read-only; its own
// scratch folder writable; nothing else. Reference outputs, the caches, the
// task sources, other jobs and the home directory stay out of reach.
// ANVIL_SANDBOX=0 turns it off; ANVIL_SANDBOX=-userns,-netns (any of
// -landlock, -seccomp, -userns, -netns, -rofs) leaves single layers out, for a
// machine where one breaks the GPU driver (`anvil sandbox-check` finds out).
// Verdicts list the layers that were in force.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "backend/torch_info.h"
#include "core/sandbox.h"
#include "core/sandbox_switches.h"
#include "core/status.h"
#include "integrity/rule_hit.h"

namespace anvil {

// No file a candidate writes may be larger (outputs of the largest KernelBench
// problems are a few GB).
inline constexpr std::uintmax_t kCandidateMaxFileBytes = std::uintmax_t{16} << 30;

struct CandidateAccess {
  std::vector<std::filesystem::path> read;    // Candidate file, built artifacts, input folders.
  std::vector<std::filesystem::path> hidden;  // Covered even without Landlock (reference outputs).
  std::filesystem::path scratch;              // Read-write; also HOME and TMPDIR.
  // Layers to leave out ("-landlock,..."), as found by ProbeSandbox; an
  // ANVIL_SANDBOX setting wins over it.
  std::string switches;
  std::uintmax_t max_file_bytes = kCandidateMaxFileBytes;
  std::uint64_t cpu_seconds = 0;  // RLIMIT_CPU (JobQuota::cpu_seconds); 0: none.
};

// The policy for `access`, before ANVIL_SANDBOX is applied.
SandboxPolicy CandidatePolicy(const TorchInfo& torch, const CandidateAccess& access);

// CandidatePolicy with $ANVIL_SANDBOX (else access.switches) applied,
// prepared; nullptr (no error) when sandboxing is turned off.
Result<std::shared_ptr<const Sandbox>> CandidateSandbox(const TorchInfo& torch, const CandidateAccess& access);

// What candidate code may read under CandidatePolicy whatever the job: the
// system's folders, the interpreter's import paths, the device files and the
// extra paths of $ANVIL_SANDBOX_READ/_WRITE (a job adds only its own files and
// scratch). Where a secret must not be (gen/api_key.h).
std::vector<std::filesystem::path> CandidateReadablePaths(const TorchInfo& torch);

// Runs a small torch program on `device` ("cpu", "cuda") inside the sandbox
// with `switches` applied.
struct SandboxProbe {
  bool ok = false;
  uint32_t layers = 0;
  std::string message;  // Its output's last line, or why it failed.
};
SandboxProbe ProbeSandbox(const TorchInfo& torch, const std::string& device, const std::string& switches);

// The switches to use on this machine: "" when the full sandbox works with
// the device, else the first of "-landlock", "-landlock,-userns", ... that
// does ("0" if only that does). Probed once per (device model, kernel,
// driver, torch) and cached under cache_dir/sandbox/; when the device fails
// even without a sandbox, "" is returned and nothing cached (a broken device
// must not turn the sandbox off for good). $ANVIL_SANDBOX, when set, wins.
std::string SandboxSwitchesFor(const TorchInfo& torch, const std::string& device, const std::string& device_model,
                               const std::filesystem::path& cache_dir);

// The tried order (shared with `anvil sandbox-check`).
inline const char* const kSandboxFallbacks[] = {"",
                                                "-signals",
                                                "-landlock",
                                                "-landlock,-root",
                                                "-landlock,-rofs,-root",
                                                "-landlock,-userns",
                                                "-landlock,-userns,-netns",
                                                "-seccomp",
                                                "0"};

// What of a prepared task folder (PreparedTask::dir) a candidate may read:
// spec.json. No weight, trial, timing set or held-out set is there: the task
// server sends the weights and makes each set from the folder's secrets.
std::vector<std::filesystem::path> CandidateReadablePrepared(const std::filesystem::path& prepared);
// Everything else in it (the secret seeds and recipes): hidden from the
// candidate where Landlock is not in force (SandboxPolicy::hidden).
std::vector<std::filesystem::path> CandidateHiddenPrepared(const std::filesystem::path& prepared);

// The rule hit for a candidate process the sandbox killed (SIGSYS) `when`
// ("while it ran the trials"): rule sandbox.forbidden_syscall, a cheat.
RuleHit SandboxViolationHit(const std::string& when);

// Environment for a sandboxed candidate: HOME, TMPDIR and tool caches in the scratch.
std::vector<std::pair<std::string, std::string>> CandidateEnvironment(const std::filesystem::path& scratch);

}  // namespace anvil
