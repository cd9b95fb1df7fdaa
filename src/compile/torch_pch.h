// The torch extension header, precompiled once per compiler and flag set
// (issue 5: the kernelbench-format build path). A kernelbench extension's
// main.cpp starts with `#include <torch/extension.h>`, exactly as load_inline
// lays it out; with `-I <dir>` first on the include path, g++ finds
// <dir>/torch/extension.h.gch and loads it instead of parsing the header
// (about half of a main.cpp compile on a CPU). g++ checks that the PCH
// matches the compile's options and otherwise reads the real header, and the
// object it writes is the same either way (checked in the tests), so a
// missing or stale PCH only costs time. ANVIL_PCH=0 turns it off.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "compile/artifact_cache.h"
#include "compile/build.h"

namespace anvil {

struct TorchPch {
  std::filesystem::path include_dir;  // Pass as -I, first.
  std::string use;                    // "built" (now) or "cached".
  double seconds = 0;                 // Building it now.
};

// The PCH for g++ with `flags` (everything but the source, output and
// -DTORCH_EXTENSION_NAME), built now if needed (concurrent builders wait for
// one another). nullopt when turned off or when it cannot be built; `log` then
// says why (the compile goes on without it).
std::optional<TorchPch> TorchExtensionPch(const std::vector<std::string>& flags, const std::string& torch_version,
                                          const ArtifactCache& cache, const BuildOptions& options, std::string& log);

}  // namespace anvil
