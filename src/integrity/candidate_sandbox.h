// The sandbox policy for processes that run candidate code (extraction and
// the run gate): the system's libraries, the interpreter's import paths, the
// GPU device files, and exactly the files this job needs read-only; its own
// scratch folder writable; nothing else. Reference outputs, the caches, the
// task sources, other jobs and the home directory stay out of reach.
// ANVIL_SANDBOX=0 turns it off; ANVIL_SANDBOX=-userns,-netns (any of
// -landlock, -seccomp, -userns, -netns) leaves single layers out, for a
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
#include "core/status.h"

namespace anvil {

// No file a candidate writes may be larger (outputs of the largest KernelBench
// problems are a few GB).
inline constexpr std::uintmax_t kCandidateMaxFileBytes = std::uintmax_t{16} << 30;

struct CandidateAccess {
  std::vector<std::filesystem::path> read;  // Candidate file, built artifacts, input folders.
  std::filesystem::path scratch;            // Read-write; also HOME and TMPDIR.
  std::uintmax_t max_file_bytes = kCandidateMaxFileBytes;
};

// The policy for `access`, before ANVIL_SANDBOX is applied.
SandboxPolicy CandidatePolicy(const TorchInfo& torch, const CandidateAccess& access);

// Applies a switch list like ANVIL_SANDBOX's ("0", "off", "-landlock,-userns");
// false when everything is off. Error on an unknown word.
Result<bool> ApplySandboxSwitches(const std::string& switches, SandboxPolicy& policy);

// CandidatePolicy with $ANVIL_SANDBOX applied, prepared; nullptr (no error)
// when sandboxing is turned off.
Result<std::shared_ptr<const Sandbox>> CandidateSandbox(const TorchInfo& torch, const CandidateAccess& access);

// What of a prepared task folder (PreparedTask::dir) a candidate may read:
// spec.json, state_dict.pt, params/ and every trial's inputs/ — never expected/.
std::vector<std::filesystem::path> CandidateReadablePrepared(const std::filesystem::path& prepared);

// Environment for a sandboxed candidate: HOME, TMPDIR and tool caches in the scratch.
std::vector<std::pair<std::string, std::string>> CandidateEnvironment(const std::filesystem::path& scratch);

}  // namespace anvil
