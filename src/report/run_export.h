// A run database written out for other tools: KernelBench's run folder
// (level_{L}_problem_{P}_sample_{S}_kernel.{py,cu,cpp}, each sample's best
// code by a turn, for KernelBench's own scripts or `anvil kernelbench`), and
// one JSON line per attempt. Reads the database only.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "core/status.h"
#include "runs/run_db.h"

namespace anvil {

struct KernelBenchExport {
  int files = 0;                        // Written.
  int empty = 0;                        // Of them, empty files: samples with no code by that turn.
  std::vector<std::string> unnumbered;  // Tasks left out: KernelBench's names need a problem number.
};

// Writes each numbered task's samples, as they stand at `turn`, into `dir`
// (made when missing). Errors: `dir` holds level folders (a problem tree, not
// a run folder), a file cannot be written, the database's.
Result<KernelBenchExport> ExportKernelBench(RunDb& db, int turn, const std::filesystem::path& dir);

// One JSON object per attempt: its task's identity, sample, turn, state,
// outcome, reward, format, code and verdict. Returns how many.
Result<int> ExportJsonl(RunDb& db, const std::filesystem::path& file);

}  // namespace anvil
