#include "integrity/candidate_sandbox.h"

#include <cstdlib>
#include <string_view>

namespace anvil {
namespace fs = std::filesystem;

namespace {

// Read-only system folders. /dev is not among them: /dev/shm holds other
// jobs' scratch folders (trial data); device files are listed one by one.
constexpr const char* kSystemFolders[] = {"/usr",   "/bin", "/sbin", "/lib",  "/lib32",
                                          "/lib64", "/etc", "/opt",  "/proc", "/sys"};
constexpr const char* kDeviceFiles[] = {"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"};

}  // namespace

SandboxPolicy CandidatePolicy(const TorchInfo& torch, const CandidateAccess& access) {
  SandboxPolicy policy;
  for (const char* f : kSystemFolders) policy.read_only.emplace_back(f);
  for (const auto& p : torch.python_paths) policy.read_only.emplace_back(p);
  for (const auto& p : access.read) policy.read_only.push_back(p);
  for (const char* f : kDeviceFiles) policy.read_write.emplace_back(f);
  // GPU device nodes (/dev/nvidia0, nvidiactl, nvidia-uvm, nvidia-caps/, ...).
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/dev", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with("nvidia") || name.starts_with("mtgpu") || name == "dri")
      policy.read_write.push_back(entry.path());
  }
  policy.read_write.push_back(access.scratch);
  policy.max_file_bytes = access.max_file_bytes;
  return policy;
}

Result<bool> ApplySandboxSwitches(const std::string& switches, SandboxPolicy& policy) {
  if (switches == "0" || switches == "off") return false;
  std::size_t start = 0;
  while (start <= switches.size()) {
    std::size_t end = switches.find(',', start);
    if (end == std::string::npos) end = switches.size();
    const std::string word = switches.substr(start, end - start);
    start = end + 1;
    if (word.empty() || word == "1" || word == "on") continue;
    if (word == "-landlock") {
      policy.confine_files = false;
    } else if (word == "-seccomp") {
      policy.forbid_syscalls = false;
    } else if (word == "-userns") {
      policy.user_namespace = false;
    } else if (word == "-netns") {
      policy.network_namespace = false;
    } else {
      return Status::Error("ANVIL_SANDBOX: unknown switch '" + word +
                           "' (use 0, or a comma list of -landlock, -seccomp, -userns, -netns)");
    }
  }
  return true;
}

Result<std::shared_ptr<const Sandbox>> CandidateSandbox(const TorchInfo& torch, const CandidateAccess& access) {
  SandboxPolicy policy = CandidatePolicy(torch, access);
  const char* env = std::getenv("ANVIL_SANDBOX");
  auto on = ApplySandboxSwitches(env != nullptr ? env : "", policy);
  if (!on.ok()) return on.status();
  if (!on.value()) return std::shared_ptr<const Sandbox>();
  return Sandbox::Prepare(policy);
}

std::vector<fs::path> CandidateReadablePrepared(const fs::path& prepared) {
  if (prepared.empty()) return {};
  std::vector<fs::path> paths = {prepared / "spec.json", prepared / "state_dict.pt", prepared / "params"};
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(prepared, ec)) {
    if (entry.path().filename().string().starts_with("trial_")) paths.push_back(entry.path() / "inputs");
  }
  return paths;
}

std::vector<std::pair<std::string, std::string>> CandidateEnvironment(const fs::path& scratch) {
  const std::string s = scratch.string();
  // PYTHONSAFEPATH: the working folder (the scratch) is not an import path,
  // so a planted torch.py cannot shadow torch.
  return {{"PYTHONSAFEPATH", "1"},
          {"HOME", s},
          {"TMPDIR", s},
          {"XDG_CACHE_HOME", s + "/.cache"},
          {"CUDA_CACHE_PATH", s + "/.nv"},
          {"TORCHINDUCTOR_CACHE_DIR", s + "/.inductor"},
          {"TRITON_CACHE_DIR", s + "/.triton"}};
}

}  // namespace anvil
