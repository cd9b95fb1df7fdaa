#include "integrity/compiler_sandbox.h"

#include <cstdlib>
#include <string>

#include "core/environment.h"
#include "core/sandbox_switches.h"

namespace anvil {
namespace fs = std::filesystem;

namespace {

// Device files a shell or compiler opens (redirections, entropy).
constexpr const char* kDeviceFiles[] = {"/dev/null", "/dev/random", "/dev/urandom"};

void AddIfThere(std::vector<fs::path>& paths, const fs::path& p) {
  std::error_code ec;
  if (!p.empty() && fs::exists(p, ec)) paths.push_back(p);
}

}  // namespace

Result<CompilerSandbox> CompilerSandbox::Make(CompilerAccess access) {
  CompilerSandbox box;
  box.access_ = std::move(access);
  SandboxPolicy policy;
  for (const auto& f : SystemReadFolders()) AddIfThere(policy.read_only, f);
  AddIfThere(policy.read_only, SourceDir() / "include");
  for (const auto& p : box.access_.read) AddIfThere(policy.read_only, p);
  for (const char* f : kDeviceFiles) AddIfThere(policy.read_write, f);
  for (const auto& p : box.access_.write) policy.read_write.push_back(p);
  policy.allow_processes = true;
  policy.max_file_bytes = kCompilerMaxFileBytes;
  // A compiler needs no GPU: the candidates' probed switches (core/sandbox.h) do not apply, only the user's.
  const char* env = std::getenv("ANVIL_SANDBOX");
  auto on = ApplySandboxSwitches(env != nullptr ? env : "", policy);
  if (!on.ok()) return on.status();
  if (!on.value()) return box;
  auto sandbox = Sandbox::Prepare(policy);
  if (!sandbox.ok()) return sandbox.status();
  box.sandbox_ = std::move(sandbox).value();
  return box;
}

Result<CompilerSandbox> CompilerSandbox::With(const std::vector<fs::path>& read,
                                              const std::vector<fs::path>& write) const {
  CompilerAccess more = access_;
  more.read.insert(more.read.end(), read.begin(), read.end());
  more.write.insert(more.write.end(), write.begin(), write.end());
  auto box = Make(std::move(more));
  if (box.ok()) box.value().cgroup_ = cgroup_;
  return box;
}

std::vector<fs::path> CompilerReads(const Backend& backend, const TorchInfo* torch,
                                    const std::vector<fs::path>& artifacts) {
  std::vector<fs::path> read = artifacts;
  if (const fs::path compiler = backend.NativeCompiler(); compiler.is_absolute()) {
    read.push_back(compiler.parent_path().parent_path());
  }
  if (const char* home = std::getenv("CUDA_HOME"); home != nullptr && *home != '\0') read.emplace_back(home);
  if (torch != nullptr) {
    for (const auto& p : torch->include_paths_cpu) read.emplace_back(p);
    for (const auto& p : torch->include_paths_cuda) read.emplace_back(p);
    for (const auto& p : torch->python_paths) read.emplace_back(p);
    if (!torch->python_include.empty()) read.emplace_back(torch->python_include);
    if (!torch->torch_lib.empty()) read.emplace_back(torch->torch_lib);
  }
  return read;
}

}  // namespace anvil
