// `anvil sandbox-check`: does the candidate sandbox work on this machine?
// Runs a small torch program on the backend's device inside the sandbox with
// every layer, then with each layer left out, and prints which layers the
// kernel applied and whether the device still worked. Operators run it once
// per machine image; a layer that breaks the GPU driver is then left out with
// ANVIL_SANDBOX=-<layer> (and every verdict records the layers in force).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "backend/torch_info.h"
#include "cli/commands.h"
#include "cli/table.h"
#include "core/environment.h"
#include "core/files.h"
#include "core/python.h"
#include "core/subprocess.h"
#include "integrity/candidate_sandbox.h"

namespace anvil {
namespace {

struct SandboxCheckArgs {
  std::string backend = "cuda";
  std::string cache_dir;
};

constexpr const char* kProbe =
    "import sys, torch\n"
    "dev = sys.argv[1]\n"
    "x = torch.arange(1024, dtype=torch.float32, device=dev)\n"
    "n = torch.cuda.device_count() if dev == 'cuda' else 1\n"
    "print(f'{dev}: {n} device(s), sum {float(x.sum()):.0f}')\n";

std::string LastLine(const std::string& text) {
  std::string t = text;
  while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.pop_back();
  const auto pos = t.rfind('\n');
  std::string line = pos == std::string::npos ? t : t.substr(pos + 1);
  return line.size() > 160 ? line.substr(0, 160) + "..." : line;
}

int Run(const SandboxCheckArgs& a) {
  auto backend = Backend::FromName(a.backend);
  if (!backend.ok()) {
    std::fprintf(stderr, "anvil sandbox-check: %s\n", backend.message().c_str());
    return kExitUsage;
  }
  if (!backend.value().HasDevice()) {
    std::fprintf(stderr, "anvil sandbox-check: no %s device on this machine\n", a.backend.c_str());
    return kExitUsage;
  }
  auto torch = LoadTorchInfo(a.cache_dir.empty() ? DefaultCacheDir() : std::filesystem::path(a.cache_dir));
  if (!torch.ok()) {
    std::fprintf(stderr, "anvil sandbox-check: %s\n", torch.message().c_str());
    return kExitFailure;
  }
  auto scratch = MakeTempDir("anvil-sandbox-check-");
  if (!scratch.ok()) {
    std::fprintf(stderr, "anvil sandbox-check: %s\n", scratch.message().c_str());
    return kExitFailure;
  }
  const std::vector<std::pair<std::string, std::string>> variants = {{"all layers", ""},
                                                                     {"without landlock", "-landlock"},
                                                                     {"without seccomp", "-seccomp"},
                                                                     {"without userns", "-userns"},
                                                                     {"without netns", "-netns"},
                                                                     {"no sandbox", "0"}};
  TextTable table({"variant", "layers in force", "result"});
  bool all_ok = false;
  std::vector<std::string> working;
  for (const auto& [label, switches] : variants) {
    CandidateAccess access;
    access.scratch = scratch.value();
    SandboxPolicy policy = CandidatePolicy(torch.value(), access);
    auto on = ApplySandboxSwitches(switches, policy);
    ProcessSpec spec = PythonWorkerSpec("candidate_worker", {});
    spec.argv = {PythonExecutable(), "-c", kProbe, backend.value().TorchDevice()};
    spec.deadline = std::chrono::seconds(120);
    spec.working_dir = scratch.value().string();
    if (on.ok() && on.value()) {
      auto box = Sandbox::Prepare(policy);
      if (!box.ok()) {
        table.Add({label, "-", box.message()});
        continue;
      }
      spec.sandbox = box.value();
      for (auto& kv : CandidateEnvironment(scratch.value())) spec.env.push_back(kv);
    }
    auto r = RunProcess(spec);
    std::string layers;
    for (const auto& n : SandboxLayerNames(r.ok() ? r.value().sandbox_layers : 0))
      layers += (layers.empty() ? "" : ", ") + n;
    const bool ok = r.ok() && r.value().Succeeded();
    std::string result = !r.ok() ? r.message()
                         : ok    ? "ok  (" + LastLine(r.value().out) + ")"
                                 : "FAILED  " + r.value().Describe() + ": " + LastLine(r.value().err);
    table.Add({label, layers.empty() ? "-" : layers, result});
    if (switches.empty()) all_ok = ok;
    if (ok && !switches.empty() && switches != "0") working.push_back(switches);
  }
  (void)RemoveTree(scratch.value());
  std::printf("%s", table.Render().c_str());
  if (all_ok) {
    std::printf("\nThe full sandbox works with the %s device here.\n", a.backend.c_str());
    return kExitOk;
  }
  std::printf("\nThe %s device does not work inside the full sandbox on this machine.\n", a.backend.c_str());
  if (!working.empty()) {
    std::printf("It works with ANVIL_SANDBOX=%s (set it for anvil; verdicts will list the layers in force).\n",
                working.front().c_str());
  }
  return kExitFailure;
}

}  // namespace

void RegisterSandboxCheck(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<SandboxCheckArgs>();
  CLI::App* cmd = app.add_subcommand(
      "sandbox-check", "Check that the backend's device works inside the candidate sandbox, layer by layer");
  cmd->add_option("--backend", args->backend, "cpu or cuda")->capture_default_str();
  cmd->add_option("--cache-dir", args->cache_dir, "Cache folder (default $ANVIL_CACHE_DIR or ~/.cache/anvil)");
  cmd->callback([args, &exit_code] { exit_code = Run(*args); });
}

}  // namespace anvil
