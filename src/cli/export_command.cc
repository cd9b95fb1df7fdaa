// `anvil export RUN.db`: a run database written out for other tools:
// KernelBench's run folder (--to-kernelbench DIR, each sample's best code by
// --turn) and one JSON line per attempt (--jsonl FILE). Exit 0 when written,
// 2 for bad usage or a database that cannot be read, 1 when writing failed.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "report/run_export.h"
#include "report/run_records.h"
#include "runs/run_db.h"

namespace anvil {
namespace {

struct ExportArgs {
  std::string run;
  std::string to_kernelbench;
  std::string jsonl;
  std::string turn = "last";
};

int Run(const ExportArgs& a) {
  const char* me = "anvil export";
  if (a.to_kernelbench.empty() && a.jsonl.empty()) {
    std::fprintf(stderr, "%s: say what to write: --to-kernelbench DIR and/or --jsonl FILE\n", me);
    return kExitUsage;
  }
  auto db = RunDb::Open(a.run, /*create=*/false, /*read_only=*/true);
  if (!db.ok()) {
    std::fprintf(stderr, "%s: %s\n", me, db.message().c_str());
    return kExitUsage;
  }
  auto turns = RunTurns(*db.value());
  if (!turns.ok()) {
    std::fprintf(stderr, "%s: %s: %s\n", me, a.run.c_str(), turns.message().c_str());
    return kExitUsage;
  }
  auto named = NamedTurn(a.turn, turns.value());
  if (!named.ok()) {
    std::fprintf(stderr, "%s: %s\n", me, named.message().c_str());
    return kExitUsage;
  }
  const int turn = named.value();
  if (!a.to_kernelbench.empty()) {
    auto written = ExportKernelBench(*db.value(), turn, a.to_kernelbench);
    if (!written.ok()) {
      std::fprintf(stderr, "%s: %s\n", me, written.message().c_str());
      return kExitUsage;
    }
    std::printf("%d file(s) in %s (turn %d; %d empty: no code by then)\n", written.value().files,
                a.to_kernelbench.c_str(), turn, written.value().empty);
    if (!written.value().unnumbered.empty()) {
      std::string names;
      for (const auto& n : written.value().unnumbered) names += (names.empty() ? "" : ", ") + n;
      std::fprintf(stderr,
                   "%s: %zu task(s) without a problem number left out (KernelBench's file names need one): %s\n", me,
                   written.value().unnumbered.size(), names.c_str());
    }
  }
  if (!a.jsonl.empty()) {
    auto lines = ExportJsonl(*db.value(), a.jsonl);
    if (!lines.ok()) {
      std::fprintf(stderr, "%s: %s\n", me, lines.message().c_str());
      return kExitFailure;
    }
    std::printf("%d attempt(s) in %s\n", lines.value(), a.jsonl.c_str());
  }
  return kExitOk;
}

}  // namespace

void RegisterExport(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<ExportArgs>();
  CLI::App* cmd = app.add_subcommand("export", "Write a run database out: KernelBench's run folder, JSON lines");
  cmd->add_option("run", args->run, "The run database (anvil generate --out)")->required();
  cmd->add_option("--to-kernelbench", args->to_kernelbench,
                  "A folder for level_{L}_problem_{P}_sample_{S}_kernel.* files (not a problem tree)");
  cmd->add_option("--turn", args->turn, "Whose code: each sample's best by turn first, last or K")
      ->capture_default_str();
  cmd->add_option("--jsonl", args->jsonl, "A file for one JSON line per attempt");
  cmd->callback([args, &exit_code] { exit_code = Run(*args); });
}

}  // namespace anvil
