#include "integrity/candidate_sandbox.h"

#include <sys/utsname.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string_view>

#include "core/environment.h"
#include "core/files.h"
#include "core/sha256.h"
#include "core/subprocess.h"

namespace anvil {
namespace fs = std::filesystem;

namespace {

std::string LastLine(const std::string& text) {
  std::string t = text;
  while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.pop_back();
  const auto pos = t.rfind('\n');
  std::string line = pos == std::string::npos ? t : t.substr(pos + 1);
  return line.size() > 200 ? line.substr(0, 200) + "..." : line;
}

constexpr const char* kDeviceFiles[] = {"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"};

// What of a prepared task folder a candidate may read: the spec, nothing of
// the secrets the task server makes the data from (the weights come from the
// task server too).
constexpr const char* kReadablePrepared[] = {"spec.json"};

// The existing paths of $`name` (colon-separated), appended to `paths`.
void ExtraPaths(const char* name, std::vector<fs::path>& paths) {
  const char* value = std::getenv(name);
  for (std::string_view rest = value != nullptr ? value : ""; !rest.empty();) {
    const std::size_t colon = rest.find(':');
    const std::string one(rest.substr(0, colon));
    std::error_code ec;
    if (!one.empty() && fs::exists(one, ec)) paths.emplace_back(one);
    rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
  }
}

}  // namespace

SandboxPolicy CandidatePolicy(const TorchInfo& torch, const CandidateAccess& access) {
  SandboxPolicy policy;
  for (const auto& f : SystemReadFolders()) policy.read_only.push_back(f);
  for (const auto& p : torch.python_paths) policy.read_only.emplace_back(p);
  for (const auto& p : access.read) policy.read_only.push_back(p);
  // Paths a device driver needs that the lists above miss (docs/sandbox.md).
  ExtraPaths("ANVIL_SANDBOX_READ", policy.read_only);
  ExtraPaths("ANVIL_SANDBOX_WRITE", policy.read_write);
  for (const char* f : kDeviceFiles) policy.read_write.emplace_back(f);
  // GPU device nodes (/dev/nvidia0, nvidiactl, nvidia-uvm, nvidia-caps/, ...).
  std::error_code ec;
  bool gpu = false;
  for (const auto& entry : fs::directory_iterator("/dev", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with("nvidia") || name.starts_with("mtgpu") || name == "dri") {
      policy.read_write.push_back(entry.path());
      gpu = true;
    }
  }
  policy.read_write.push_back(access.scratch);
  // The CUDA driver names its threads during cuInit by writing /proc/<pid>/task/<tid>/comm, and fails with error
  // 304 when it cannot (NVIDIA/OpenShell#710): the child's own /proc entries are not known before it runs, so on a
  // machine with a GPU driver /proc is writable as a whole, for what the kernel lets the user write there. Its
  // kernel settings (/proc/sys, ...) stay read-only in the child's mount namespace (core/sandbox.h, rofs and root).
  if (gpu) policy.read_write.emplace_back("/proc");
  policy.hidden = access.hidden;
  policy.max_file_bytes = access.max_file_bytes;
  policy.max_cpu_seconds = access.cpu_seconds;
  return policy;
}

std::vector<fs::path> CandidateReadablePaths(const TorchInfo& torch) {
  const SandboxPolicy policy = CandidatePolicy(torch, CandidateAccess{});
  std::vector<fs::path> paths;
  for (const auto* list : {&policy.read_only, &policy.read_write}) {
    for (const fs::path& p : *list) {
      if (!p.empty()) paths.push_back(p);
    }
  }
  return paths;
}

Result<std::shared_ptr<const Sandbox>> CandidateSandbox(const TorchInfo& torch, const CandidateAccess& access) {
  SandboxPolicy policy = CandidatePolicy(torch, access);
  const char* env = std::getenv("ANVIL_SANDBOX");
  auto on = ApplySandboxSwitches(env != nullptr ? env : access.switches, policy);
  if (!on.ok()) return on.status();
  if (!on.value()) return std::shared_ptr<const Sandbox>();
  return Sandbox::Prepare(policy);
}

std::vector<fs::path> CandidateReadablePrepared(const fs::path& prepared) {
  std::vector<fs::path> paths;
  if (prepared.empty()) return paths;
  for (const char* name : kReadablePrepared) paths.push_back(prepared / name);
  return paths;
}

std::vector<fs::path> CandidateHiddenPrepared(const fs::path& prepared) {
  std::vector<fs::path> paths;
  if (prepared.empty()) return paths;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(prepared, ec)) {
    const std::string name = entry.path().filename().string();
    if (std::find(std::begin(kReadablePrepared), std::end(kReadablePrepared), name) == std::end(kReadablePrepared)) {
      paths.push_back(entry.path());
    }
  }
  return paths;
}

SandboxProbe ProbeSandbox(const TorchInfo& torch, const std::string& device, const std::string& switches) {
  static constexpr const char* kProbe =
      "import sys, torch\n"
      "dev = sys.argv[1]\n"
      "x = torch.arange(1024, dtype=torch.float32, device=dev)\n"
      "n = torch.cuda.device_count() if dev == 'cuda' else 1\n"
      "print(f'{dev}: {n} device(s), sum {float(x.sum()):.0f}')\n";
  SandboxProbe probe;
  auto scratch = MakeTempDir("anvil-sandbox-probe-");
  if (!scratch.ok()) {
    probe.message = scratch.message();
    return probe;
  }
  CandidateAccess access;
  access.scratch = scratch.value();
  SandboxPolicy policy = CandidatePolicy(torch, access);
  auto on = ApplySandboxSwitches(switches, policy);
  ProcessSpec spec;
  spec.argv = {PythonExecutable(), "-c", kProbe, device};
  spec.env = {{"PYTHONPATH", PythonPackageDir().string()}};
  spec.deadline = std::chrono::seconds(120);
  spec.working_dir = scratch.value().string();
  if (!on.ok()) {
    probe.message = on.message();
  } else {
    if (on.value()) {
      auto box = Sandbox::Prepare(policy);
      if (!box.ok()) {  // Never "ok" for a probe that would have run outside the sandbox.
        probe.message = "the sandbox could not be prepared: " + box.message();
        (void)RemoveTree(scratch.value());
        return probe;
      }
      spec.sandbox = box.value();
      for (auto& kv : CandidateEnvironment(scratch.value())) spec.env.push_back(kv);
    }
    auto r = RunProcess(spec);
    if (!r.ok()) {
      probe.message = r.message();
    } else {
      probe.ok = r.value().Succeeded();
      probe.layers = r.value().sandbox_layers;
      probe.message = probe.ok ? LastLine(r.value().out) : r.value().Describe() + ": " + LastLine(r.value().err);
    }
  }
  (void)RemoveTree(scratch.value());
  return probe;
}

std::string SandboxSwitchesFor(const TorchInfo& torch, const std::string& device, const std::string& device_model,
                               const fs::path& cache_dir) {
  if (const char* env = std::getenv("ANVIL_SANDBOX"); env != nullptr) return env;
  struct utsname u;
  std::string kernel = ::uname(&u) == 0 ? std::string(u.release) : "";
  std::string driver;
  if (auto v = ReadFile("/proc/driver/nvidia/version"); v.ok()) driver = v.value();
  const fs::path file =
      cache_dir / "sandbox" /
      (device + "-" +
       Sha256Hex(device_model + "|" + kernel + "|" + driver + "|" + torch.torch_version + "|v4").substr(0, 16) +
       ".txt");
  if (auto cached = ReadFile(file); cached.ok()) return cached.value();
  std::optional<std::string> chosen;
  for (const char* switches : kSandboxFallbacks) {
    if (ProbeSandbox(torch, device, switches).ok) {
      chosen = switches;
      break;
    }
  }
  if (!chosen) {
    // Not even without a sandbox: the device or torch is broken, not the
    // sandbox. Keep every layer and cache nothing; the evaluation reports it.
    return "";
  }
  if (!chosen->empty()) {
    std::fprintf(stderr,
                 "anvil: the %s device does not work inside the full candidate sandbox on this machine; "
                 "using ANVIL_SANDBOX=%s (verdicts list the layers in force; `anvil sandbox-check` shows why)\n",
                 device.c_str(), chosen->c_str());
  }
  std::error_code ec;
  fs::create_directories(file.parent_path(), ec);
  (void)WriteFileAtomic(file, *chosen);
  return *chosen;
}

RuleHit SandboxViolationHit(const std::string& when) {
  RuleHit hit;
  hit.rule = "sandbox.forbidden_syscall";
  hit.severity = "cheat";
  hit.source = "runtime";
  hit.message = "the sandbox killed the candidate's process (SIGSYS) " + when +
                ": it made a forbidden system call (creating a process, a network socket, ptrace or another "
                "process's memory, signalling anvil, io_uring, namespaces or mounts)";
  return hit;
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
