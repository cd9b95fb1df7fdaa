// anvil: verify GPU/CPU kernels written by language models.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "cli/commands.h"
#include "core/left_folders.h"

int main(int argc, char** argv) {
  CLI::App app{"anvil: compile, run, check and time candidate kernels against PyTorch references"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("anvil ") + ANVIL_VERSION);
  int exit_code = anvil::kExitOk;
  anvil::RegisterEval(app, exit_code);
  anvil::RegisterTasks(app, exit_code);
  anvil::RegisterKernelbench(app, exit_code);
  anvil::RegisterSandboxCheck(app, exit_code);
  anvil::RegisterBench(app, exit_code);
  anvil::RegisterCache(app, exit_code);
  anvil::RegisterModelCheck(app, exit_code);
  anvil::RegisterGenerate(app, exit_code);
  anvil::RegisterExport(app, exit_code);
  anvil::RegisterServe(app, exit_code);
  anvil::RegisterRl(app, exit_code);
  anvil::RegisterReport(app, exit_code);
  anvil::RegisterCompare(app, exit_code);
  // What killed anvil processes left in /tmp and /dev/shm (a run's trial data).
  if (const anvil::SweptFolders swept = anvil::SweepLeftFolders(); swept.folders > 0) {
    std::fprintf(stderr, "anvil: removed %d folder(s) (%.1f MB) that killed anvil processes had left behind\n",
                 swept.folders, static_cast<double>(swept.bytes) / 1e6);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : anvil::kExitUsage;
  }
  return exit_code;
}
