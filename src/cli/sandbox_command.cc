// `anvil sandbox-check`: does the candidate sandbox work on this machine?
// Runs a small torch program on the backend's device inside the sandbox with
// every layer, then with layers left out in the order anvil falls back to,
// and prints which layers the kernel applied and whether the device worked.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "backend/torch_info.h"
#include "cli/commands.h"
#include "cli/table.h"
#include "core/cgroup.h"
#include "core/environment.h"
#include "integrity/candidate_sandbox.h"
#include "run/device_memory.h"

namespace anvil {
namespace {

struct SandboxCheckArgs {
  std::string backend = "cuda";
  std::string cache_dir;
  std::vector<std::string> switches;  // Only these variants (default: anvil's fallbacks in order).
};

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
  const std::string device = backend.value().TorchDevice();
  TextTable table({"layers left out", "layers in force", "result"});
  bool full_ok = false;
  std::string first_working;
  std::vector<std::string> variants = a.switches;
  if (variants.empty()) variants.assign(std::begin(kSandboxFallbacks), std::end(kSandboxFallbacks));
  for (const std::string& switches : variants) {
    SandboxProbe p = ProbeSandbox(torch.value(), device, switches);
    std::string layers;
    for (const auto& n : SandboxLayerNames(p.layers)) layers += (layers.empty() ? "" : ", ") + n;
    const std::string label = switches.empty() ? "(none)" : switches == "0" ? "all" : switches;
    table.Add({label, layers.empty() ? "-" : layers, (p.ok ? "ok  " : "FAILED  ") + p.message});
    if (switches.empty()) full_ok = p.ok;
    if (p.ok && first_working.empty() && !switches.empty()) first_working = switches;
  }
  std::printf("%s", table.Render().c_str());
  // The quotas' mechanisms (core/cgroup.h): not a layer to probe, the kernel's.
  std::printf("\nQuotas (--quota-memory, --quota-pids): %s\n", JobCgroup::Mechanisms().c_str());
  std::printf("CPU time (--quota-cpu): RLIMIT_CPU of each run process, set in its sandbox\n");
  {
    std::string why_not;
    auto nvml = NvmlReader(&why_not);
    std::printf("Device memory (--quota-device-memory, cuda): %s\n",
                nvml ? ("NVML's per-process count, every 20 ms (the smallest device: " +
                        std::to_string(nvml->DeviceBytes() >> 20) + " MiB)")
                           .c_str()
                     : ("none: " + why_not).c_str());
  }
  if (!a.switches.empty()) return first_working.empty() && !full_ok ? kExitFailure : kExitOk;  // As asked: no advice.
  if (full_ok) {
    std::printf("\nThe full sandbox works with the %s device here.\n", a.backend.c_str());
    return kExitOk;
  }
  std::printf("\nThe %s device does not work inside the full sandbox on this machine.\n", a.backend.c_str());
  if (!first_working.empty()) {
    std::printf("anvil picks ANVIL_SANDBOX=%s by itself here (or set it); verdicts list the layers in force.\n",
                first_working.c_str());
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
  cmd->add_option("--switches", args->switches,
                  "Probe only this variant (repeatable; \"\" = every layer, e.g. -landlock,-root); default: every "
                  "variant anvil falls back through, in order");
  cmd->callback([args, &exit_code] { exit_code = Run(*args); });
}

}  // namespace anvil
