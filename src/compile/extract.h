// Extracting the sources of a `kernelbench`-format candidate: its module is
// imported in a child process (it is untrusted code) with load_inline replaced
// by a recorder, so the compile gate can build the extensions itself. The
// child's fate (syntax error, exception, crash, hang) is reported as data.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "backend/torch_info.h"
#include "core/cgroup.h"
#include "core/status.h"

namespace anvil {

struct ExtensionSpec {
  std::string name;
  std::vector<std::string> cpp_sources, cuda_sources;
  bool has_functions = false;                                  // `functions=` given: anvil generates the bindings.
  std::vector<std::pair<std::string, std::string>> functions;  // name -> docstring
  std::vector<std::string> extra_cflags, extra_cuda_cflags, extra_ldflags, extra_include_paths;
  std::optional<bool> with_cuda;
  // The worker's hash of the call's arguments but the name: a load_inline at
  // run time under a name of its own process (a uuid) finds this build by it.
  std::string key;
};

struct Extraction {
  std::vector<ExtensionSpec> extensions;
  // The candidate's module failed while importing:
  bool failed = false;
  bool timed_out = false;
  bool syntax_error = false;
  int syntax_line = 0;
  std::string stage, message, traceback;
  int term_signal = 0;
  uint32_t sandbox_layers = 0;
  std::string stderr_tail;
  double seconds = 0;
  // What importing it replaced of what anvil's worker relies on, then when
  // (RunGate::tampered); any is a cheat.
  std::vector<std::string> tampered;
};

// Error only for anvil's own failures (cannot start Python, unreadable output).
// Imports the candidate in a sandboxed child (integrity/candidate_sandbox.h)
// and builds its ModelNew with `init_args` (TaskInitArgs; empty: not built).
// `sandbox_switches` as in CandidateAccess::switches; `quota`: the import's
// process quotas (core/cgroup.h; zeros: none).
Result<Extraction> ExtractExtensions(const std::filesystem::path& candidate, const std::filesystem::path& init_args,
                                     const TorchInfo& torch, const std::string& sandbox_switches,
                                     std::chrono::seconds deadline, const JobQuota& quota = {});

}  // namespace anvil
