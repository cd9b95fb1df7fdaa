// anvil: verify GPU/CPU kernels written by language models.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "cli/commands.h"

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
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : anvil::kExitUsage;
  }
  return exit_code;
}
