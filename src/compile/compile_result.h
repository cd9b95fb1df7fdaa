// The compile gate's outcome (gate 0): whether the candidate's sources built,
// the diagnostics mapped back to the candidate's own lines, the full log, and
// the artifacts (shared objects) by name. Plain value.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "compile/diagnostics.h"
#include "integrity/native_source.h"

namespace anvil {

struct CompileResult {
  bool ran = false;
  bool ok = false;
  bool cached = false;  // Every artifact came from the cache.
  double seconds = 0;   // Wall time spent compiling now.
  // Compiler time by phase ("cxx", "nvcc", "link", "pch"), summed over
  // commands; the compiles of one extension run at once, so they may add up
  // to more than `seconds`.
  std::map<std::string, double> phase_seconds;
  std::string pch;  // kernelbench: "built" / "cached" when main.cpp used the torch PCH (compile/torch_pch.h).
  // kernelbench on cuda: which torch headers built cuda.cu: "slim"
  // (include/anvil/slim_torch), "fallback" (the slim ones failed; torch's
  // full headers, as load_inline), "full" (the slim ones were off).
  std::string torch_headers;
  std::string compiler;                 // "g++", "nvcc+g++", "python" (syntax), ...
  std::vector<Diagnostic> diagnostics;  // Mapped, deduplicated, capped.
  std::string summary;                  // Human text of the diagnostics.
  std::string log;                      // Full compiler output (also at log_path).
  std::filesystem::path log_path;
  std::map<std::string, std::string> artifacts;  // Extension name (or "native") -> .so path.
  // kernelbench: ExtensionSpec::key -> extension name, for a run-time
  // load_inline whose name differs from the extraction's.
  std::map<std::string, std::string> extension_keys;
  // C++/CUDA texts the candidate supplied, for the legal gate: (name, text).
  NativeSources native_sources;
  // A compiler of the build went over its memory quota and the kernel killed
  // it (the group's own count): what the summary leads with.
  std::string over_quota;
  // anvil could not run the build as asked (no folder to build in, no
  // sandbox, quotas it could not keep, a write of its own that failed):
  // anvil's failure, not the candidate's.
  std::string anvil_problem;
};

}  // namespace anvil
