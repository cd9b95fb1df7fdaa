// The anvil executable's subcommands. Each registers its options on a CLI11
// app and returns the process exit code: 0 when the work was done (whatever
// the verdicts), 2 for bad usage or input, 1 for anvil's own failure.
#pragma once

namespace CLI {
class App;
}  // namespace CLI

namespace anvil {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

// Registers `eval`; the returned callable runs it after parsing.
void RegisterEval(CLI::App& app, int& exit_code);
void RegisterTasks(CLI::App& app, int& exit_code);
void RegisterKernelbench(CLI::App& app, int& exit_code);
void RegisterSandboxCheck(CLI::App& app, int& exit_code);
void RegisterBench(CLI::App& app, int& exit_code);
void RegisterCache(CLI::App& app, int& exit_code);
void RegisterModelCheck(CLI::App& app, int& exit_code);
void RegisterGenerate(CLI::App& app, int& exit_code);
void RegisterExport(CLI::App& app, int& exit_code);
void RegisterServe(CLI::App& app, int& exit_code);
void RegisterRl(CLI::App& app, int& exit_code);
void RegisterReport(CLI::App& app, int& exit_code);
void RegisterCompare(CLI::App& app, int& exit_code);

}  // namespace anvil
