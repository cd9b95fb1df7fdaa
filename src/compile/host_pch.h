// nvcc's host compile with torch's headers precompiled (issue 5: the cold
// kernelbench build).
//
// nvcc's last step compiles cudafe++'s host output, an 8 MB preprocessed
// file: torch's headers, then the extension's own code. With anvil's fixed
// preamble (cuda.cu starts with the same three #includes) and a fixed module
// id, the headers' part of that file is the same text for every extension
// built with the same flags (only the main file's path in its line markers
// differs, which changes nothing in the object). So that part is
// precompiled once, keyed by its text and the command, and later builds
// compile `#include "<cache>/prefix.h"` followed by their own part: about a
// third of the time on a CPU. The PCH is made the second time a flag set
// comes (the first build of a flag set only leaves a mark), beside that
// build's plain host compile. g++ reads the header's text where it cannot use
// the PCH, and the object is the same either way (host_pch_test.cc); a
// compile that fails with it runs again as nvcc wrote it.
// ANVIL_HOST_PCH=0 turns it off.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "compile/artifact_cache.h"
#include "core/status.h"
#include "core/subprocess.h"

namespace anvil {

// The precompiled prefix in its artifact folder (the PCH is this name + ".gch").
inline constexpr char kHostPchHeader[] = "prefix.h";

// cudafe++'s output split where the main file's own code starts: before the
// first line marker (`# N "<main>"`) that returns to the main file at a line
// >= `first_own_line`. nullopt when there is no such marker.
struct CudafeSplit {
  std::string_view prefix;  // The headers' part, ending with a newline.
  std::string_view rest;
  std::string main_file;  // As the markers spell it (quoted in the text).
};
std::optional<CudafeSplit> SplitCudafeOutput(std::string_view text, int first_own_line);

// What the PCH must match: `final` (the host compile line of nvcc's dry run)
// without its input, its output and -DTORCH_EXTENSION_NAME, plus the prefix
// with the main file's path spelled as "cuda.cu".
std::string HostPchKey(const std::string& final, const CudafeSplit& split, const std::string& compiler_identity);

// Runs a command line of the dry run (with nvcc's environment), in the
// build's sandbox and, when `also_writing` is set, with that folder writable
// too (the precompiled header's own).
using RunLine =
    std::function<Result<ProcessResult>(const std::string& line, const std::filesystem::path& also_writing)>;

struct HostCompile {
  Result<ProcessResult> run = Status::Error("not run");
  std::string use;  // "cached", "built" (now, beside a plain compile), or "" (plain).
  double pch_seconds = 0;
  std::string log;  // anvil's lines about it.
};

// Runs nvcc's host compile `final`, with the precompiled prefix when it can.
HostCompile RunHostCompile(const std::string& final, int first_own_line, const ArtifactCache& cache,
                           const RunLine& run_line);

}  // namespace anvil
