// The compile gate's builders: `kernelbench` extensions (the sources a
// candidate hands to load_inline, built the way torch would build them, plus
// generated pybind bindings) and `native` sources (one C++/CUDA file behind
// anvil/native.h). Artifacts are cached by content; diagnostics are mapped
// back to the candidate's own lines. Thread-safe; a failing build is a
// CompileResult with ok = false, never an error of anvil.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "backend/torch_info.h"
#include "compile/artifact_cache.h"
#include "compile/compile_result.h"
#include "compile/extract.h"
#include "core/cgroup.h"

namespace anvil {

// Below this, a compiler killed over an automatic memory quota
// (JobQuota::memory_automatic) is the machine's infra_error, not the
// source's compile_error: anvil's share of a small machine, not the
// candidate, was too small for an honest build with torch's headers.
constexpr std::uint64_t kAutomaticBuildMemoryFloor = std::uint64_t{4} << 30;

struct BuildOptions {
  std::chrono::seconds deadline{600};  // Per compiler invocation.
  DiagnosticOptions diagnostics;
  // The quotas of a candidate's build: its compilers together, in control
  // groups of their own (core/cgroup.h); zeros: none.
  JobQuota quota;
};

struct CandidateSource {
  std::string file_name;  // Basename, used in diagnostics ("relu.py").
  std::string text;       // The candidate file's contents.
};

// The C++/CUDA sources of `extensions`, named "<ext>.cpp_sources[i]" and
// "<ext>.cuda_sources[i]" (what the static scan reads and diagnostics name).
NativeSources NativeSourcesOf(const std::vector<ExtensionSpec>& extensions);

CompileResult BuildKernelbench(const std::vector<ExtensionSpec>& extensions, const CandidateSource& candidate,
                               const Backend& backend, const TorchInfo& torch, const ArtifactCache& cache,
                               const BuildOptions& options);

CompileResult BuildNative(const std::filesystem::path& source, const CandidateSource& candidate, const Backend& backend,
                          const ArtifactCache& cache, const BuildOptions& options);

// Candidate-supplied compiler flags are filtered to a safe set (optimization,
// defines, warnings, arch, fast-math); the rest are dropped and reported.
std::vector<std::string> SafeFlags(const std::vector<std::string>& flags, std::vector<std::string>* dropped);

}  // namespace anvil
