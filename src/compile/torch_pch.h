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

// The PCH in its artifact folder, beside the hand-over header torch/extension.h.
inline constexpr char kTorchPchFile[] = "torch/extension.h.gch";

struct TorchPch {
  std::filesystem::path include_dir;  // Pass as -I, first.
  std::string use;                    // "built" (now) or "cached".
  double seconds = 0;                 // Building it now.
};

// Where the precompiled headers (torch's and the host compile's,
// compile/host_pch.h) are looked up and made: in the anvil cache folder
// $ANVIL_PCH_CACHE (as --cache-dir takes), which several caches of one
// machine may share, or else in `cache`. They are the same for every
// candidate; a fresh cache (a benchmark's cold pass, a test) need not pay
// for them again.
const ArtifactCache& PchCache(const ArtifactCache& cache);

// The cache key of the PCH for g++ with `flags`.
std::string TorchPchKey(const std::vector<std::string>& flags, const std::string& torch_version);

// The PCH for g++ with `flags` (everything but the source, output and
// -DTORCH_EXTENSION_NAME), built now if needed. While another build makes
// it, a machine with cores to spare (8 or more) compiles without it instead of
// waiting (the object is the same; the first builds of a cold H200 waited up
// to 45 s with 15 cores idle); a smaller one waits, its cores being busy with
// that build anyway. ANVIL_PCH_WAIT=1 or 0 decides instead. nullopt when
// turned off, built by another, or when it cannot be built; `log` then says
// why (the compile goes on without it). g++ runs in the compiler sandbox,
// reading `reads` (integrity/compiler_sandbox.h) and writing the PCH's folder.
std::optional<TorchPch> TorchExtensionPch(const std::vector<std::string>& flags, const std::string& torch_version,
                                          const ArtifactCache& cache, const BuildOptions& options,
                                          const std::vector<std::filesystem::path>& reads, std::string& log);

}  // namespace anvil
