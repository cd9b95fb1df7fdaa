// Running one compiler command for the compile gate: a deadline, the log
// captured whole, and the toolchain's identity for cache keys. Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/subprocess.h"
#include "integrity/compiler_sandbox.h"

namespace anvil {

struct CompilerRun {
  bool ok = false;
  bool timed_out = false;
  double seconds = 0;
  std::string log;  // stdout + stderr.
  // Parts of `seconds` by step, where the compile reports them (nvcc in
  // phases: "nvcc_host_front", "nvcc_device", "nvcc_host_compile").
  std::map<std::string, double> step_seconds;
};

// How far compilers are niced (ProcessSpec::nice): with 8 or more compiles at
// once, the candidates' runs and checks beside them, and above all their
// timed calls, get the CPU first. The compiles take the rest.
inline constexpr int kCompilerNice = 10;

// A compiler's process: `argv` under `deadline`, niced, its files capped at
// kCompilerMaxFileBytes, its log kept up to 4 MB, in the C locale, inside
// `box` (its temporary files in the box's first writable folder).
ProcessSpec CompilerProcessSpec(std::vector<std::string> argv, std::chrono::milliseconds deadline,
                                const CompilerSandbox& box);

// Error only when the compiler could not be started (e.g. not installed).
Result<CompilerRun> RunCompiler(const std::vector<std::string>& argv, std::chrono::seconds deadline,
                                const CompilerSandbox& box);

// `<compiler> --version`'s first line, memoized per compiler; "" if unknown.
std::string CompilerIdentity(const std::string& compiler);

// Joins argv into one shell-like line for logs.
std::string JoinCommand(const std::vector<std::string>& argv);

}  // namespace anvil
