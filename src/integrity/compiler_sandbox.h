// The sandbox of every compiler process (g++, nvcc and the programs they run;
// catalog E at build time). A candidate's sources and flags reach them, and
// compilers read files (#include, the assembler's .incbin) and take options
// that run programs or write files. Under it a compiler reads the system's
// folders (the toolchain), anvil's headers, the artifact cache (the
// precompiled headers) and what its caller lists (torch's and Python's
// headers and libraries), and writes only its own build folder: the cache's
// prepared tasks (reference outputs, inputs), other builds in progress and
// the home directory are out of its reach. It has no network and cannot
// signal anvil; it may run programs (a compiler runs its own). ANVIL_SANDBOX=0
// turns it off, as for candidates. Values; thread-safe.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <vector>

#include "backend/backend.h"
#include "backend/torch_info.h"
#include "core/cgroup.h"
#include "core/sandbox.h"
#include "core/status.h"

namespace anvil {

// No file a compiler writes may grow past this (RLIMIT_FSIZE): a candidate
// cannot fill the disk through its build (a giant static array), which would
// make its failure look like anvil's (pipeline/runtime_outcome.h). torch's
// extension PCH, the largest, is about 0.75 GB.
inline constexpr std::uintmax_t kCompilerMaxFileBytes = std::uintmax_t{2} << 30;

struct CompilerAccess {
  std::vector<std::filesystem::path> read;   // Besides the system's folders and anvil's headers.
  std::vector<std::filesystem::path> write;  // The first is also the compiler's TMPDIR.
};

class CompilerSandbox {
 public:
  // Fails only when a listed path cannot be opened (core/sandbox.h).
  static Result<CompilerSandbox> Make(CompilerAccess access);
  // The same with more folders to read and write (a precompiled header's).
  Result<CompilerSandbox> With(const std::vector<std::filesystem::path>& read,
                               const std::vector<std::filesystem::path>& write) const;

  // Null when sandboxing is off.
  const std::shared_ptr<const Sandbox>& sandbox() const { return sandbox_; }
  // Where the compiler keeps its temporary files (TMPDIR); empty: its default.
  std::filesystem::path temp_dir() const { return access_.write.empty() ? std::filesystem::path() : access_.write[0]; }
  // The build's quotas: every compiler it runs joins these control groups
  // (core/cgroup.h); null: none. Kept by With().
  const std::shared_ptr<const JobCgroup>& cgroup() const { return cgroup_; }
  void set_cgroup(std::shared_ptr<const JobCgroup> cgroup) { cgroup_ = std::move(cgroup); }

 private:
  CompilerAccess access_;
  std::shared_ptr<const Sandbox> sandbox_;
  std::shared_ptr<const JobCgroup> cgroup_;
};

// What a build reads besides the system's folders: the CUDA toolkit (where
// `backend`'s compiler lives, and $CUDA_HOME), `artifacts` (the artifact
// cache's root: the precompiled headers are kept there), and for a torch
// extension torch's include and library folders, Python's headers and import
// paths.
std::vector<std::filesystem::path> CompilerReads(const Backend& backend, const TorchInfo* torch,
                                                 const std::vector<std::filesystem::path>& artifacts);

}  // namespace anvil
