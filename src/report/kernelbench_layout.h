// KernelBench's run folder: generated candidates named
// level_{L}_problem_{P}_sample_{S}_kernel.{py,cu,cpp,cc}, side by side in one
// folder, each answering the problem file {root}/level{L}/{P}_*.py. Reading a
// run gives one job per candidate; names that do not match and problems that
// cannot be found are listed, not fatal. Stateless functions; thread-safe.
#pragma once

#include <compare>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "pipeline/batch.h"

namespace anvil {

struct SampleId {
  int level = 0;
  int problem = 0;
  int sample = 0;
  auto operator<=>(const SampleId&) const = default;  // NOLINT(modernize-use-nullptr): false positive on <=>.
};

// The id in a candidate file name such as "level_1_problem_19_sample_0_kernel.py";
// nullopt when the name does not follow that pattern.
std::optional<SampleId> ParseSampleFileName(std::string_view file_name);

// Where the problems are when no --kernelbench names them: $ANVIL_KERNELBENCH,
// else ../shared/kernelbench beside the source tree.
std::filesystem::path DefaultKernelBenchRoot();

// The folder holding level1/, level2/, ...: `root` itself, or root/KernelBench
// when `root` is a checkout of the KernelBench repository. Error when neither
// holds a level folder.
Result<std::filesystem::path> ResolveProblemRoot(const std::filesystem::path& root);

struct KernelBenchJob {
  SampleId id;
  Job job;
};

// A candidate file that is not evaluated, and why.
struct SkippedFile {
  std::string file;  // The file name.
  std::string reason;
};

// A problem that candidates answer but whose task file is missing or
// ambiguous; its candidates are not evaluated.
struct MissingProblem {
  int level = 0;
  int problem = 0;
  std::string reason;
  std::vector<std::string> files;  // The candidates left out.
};

struct KernelBenchRun {
  std::filesystem::path problem_root;  // As resolved by ResolveProblemRoot.
  std::vector<KernelBenchJob> jobs;    // Sorted by id.
  std::vector<SkippedFile> skipped;    // Names that do not match; a second file for one id.
  std::vector<MissingProblem> missing;
};

// Reads `run_dir` (not recursive; files that are not .py/.cu/.cpp/.cc are
// ignored) against the problems under `kernelbench_root`. Error only when a
// folder cannot be read or the root holds no level folder; a run without any
// job is not an error (the caller decides).
Result<KernelBenchRun> ReadKernelBenchRun(const std::filesystem::path& run_dir,
                                          const std::filesystem::path& kernelbench_root);

}  // namespace anvil
