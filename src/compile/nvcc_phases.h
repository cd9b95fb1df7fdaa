// One nvcc compile (`nvcc ... -c x.cu -o x.o`) with its host front end and its
// device pipeline at the same time (issue 5: the cold kernelbench build),
// and its host compile with torch's part precompiled (compile/host_pch.h).
//
// nvcc runs, one after the other: the host preprocessor and cudafe++ (which
// splits host from device code and writes the translation unit's module id),
// then the device preprocessor, cicc, ptxas and fatbinary, then the host
// compiler. The device steps wait only for the module id, a name nvcc derives
// from the source's path. Here anvil writes a module id first (the same for
// every build, so that cudafe++'s output for torch's headers is too), runs the two front ends at once,
// then the host compiler: on a torch extension each front end is about a third
// of the compile. The steps are nvcc's own, read from `nvcc -dryrun`, with one
// change: cudafe++ reads the module id instead of writing it. Anything
// unexpected in that list, and ANVIL_NVCC_PHASES=0, runs plain nvcc instead.
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "compile/artifact_cache.h"
#include "compile/compiler_run.h"
#include "core/status.h"

namespace anvil {

// nvcc's steps for one compile, split for running at once.
struct NvccPhases {
  std::vector<std::pair<std::string, std::string>> env;  // Simple NAME=value lines of the dry run.
  std::vector<std::string> host;                         // Host preprocessor, cudafe++ (in order).
  std::vector<std::string> device;                       // Device preprocessor, cicc, ptxas, fatbinary...
  std::string final;                                     // The host compiler, writing the object.
  std::filesystem::path module_id_file;
};

// Splits `nvcc -dryrun`'s stderr ("#$ " lines). nullopt when it does not have
// the expected shape (then plain nvcc must run).
std::optional<NvccPhases> ParseNvccDryRun(const std::string& dry_run_err);

// Runs the nvcc command `argv` (a compile with -c) in phases when it can, else
// as it is. `temp_dir` holds nvcc's intermediate files (created, then
// removed). The log is what nvcc would print: the host front end's output, the
// device steps' output unless the host front end failed, the host compiler's.
// Every step runs inside `box`. With `host_pch` set, the host compile uses (or makes) the precompiled
// part of cudafe++'s output that comes before the source's line
// `first_own_line` (everything before it is anvil's fixed preamble).
struct HostPchUse {
  const ArtifactCache* cache = nullptr;
  int first_own_line = 0;
};
Result<CompilerRun> RunNvccInPhases(const std::vector<std::string>& argv, const std::filesystem::path& temp_dir,
                                    std::chrono::seconds deadline, const CompilerSandbox& box,
                                    const HostPchUse& host_pch = {});

}  // namespace anvil
