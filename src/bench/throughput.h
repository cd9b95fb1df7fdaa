// `anvil bench throughput` (issue 5): the same kernelbench-format candidates
// through anvil — cold (empty caches), then again warm — and through the stock
// path (python/anvil_py/stock_path.py: a fresh Python process per candidate
// calling load_inline, then KernelBench's checks), one after the other in one
// run, with the GPUs' utilization sampled throughout. The report gives
// verdicts per hour for each, where anvil's time went by stage, the overhead
// per candidate beyond compiling and kernel time, and how idle the GPUs were.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "core/status.h"
#include "pipeline/batch.h"
#include "verify/verdict.h"

namespace anvil {

// One pass over the candidates: anvil's (cold or warm) or the stock path's.
struct BenchPass {
  std::string name;  // "anvil_cold", "anvil_warm", "anvil_steady", "anvil_fresh", "stock"
  double seconds = 0;
  int candidates = 0;
  double verdicts_per_hour = 0;
  // nvidia-smi's utilization.gpu, sampled every ~0.5 s over the pass and the
  // GPUs it used; nullopt without a GPU.
  std::optional<double> gpu_busy;  // Mean utilization, 0..1.
  std::optional<double> gpu_idle;  // Share of samples at 0 %.
};

// One candidate's outcome on the stock path.
struct StockOutcome {
  bool ran = false;
  bool compiled = false;
  bool correct = false;
  std::optional<double> runtime_ms;
  double seconds = 0;                    // Its process, start to end.
  std::map<std::string, double> phases;  // import, reference, compile, trials, timing.
  std::string error;
};

struct ThroughputReport {
  std::vector<Job> jobs;
  // steady: the same candidates as new ones on the same tasks, fresh: as new
  // ones on new tasks, after the cold pass (ThroughputOptions::steady,
  // ::fresh); in the order of `jobs`.
  std::vector<Verdict> cold, steady, fresh, warm;
  std::vector<StockOutcome> stock;  // Per job; ran = false where the sample skipped it.
  std::vector<BenchPass> passes;
  double pch_seconds = 0;             // The torch PCH built during the cold pass (once per machine and torch).
  double stock_deadline_seconds = 0;  // The stock path's limit per candidate.
  int gpus = 1;
  int jobs_per_gpu = 1;
  int compile_ahead = 0;
  // Candidates whose load_inline extension the bench renamed (a copy of the
  // candidate in the work folder) so that no two share a build.
  int renamed = 0;
};

struct ThroughputOptions {
  bool anvil =
      true;  // anvil's cold and warm passes (off: the stock path only, e.g. more stock samples in a call of its own).
  bool warm = true;  // anvil's warm pass (after the cold one).
  // After the cold and warm passes, a steady one: every candidate again as a
  // new one (its extension renamed again, or a non-Python file changed by a
  // comment: built anew) on the same tasks, which the cold pass prepared and
  // timed (reference outputs and baselines are cached per task). What an RL
  // run sees from its second step on: new candidates for the same problems.
  bool steady = false;
  // Last, a fresh one: every candidate again as a new one on a new task (a copy of the task file that
  // differs by a comment: prepared anew), so that nothing of the cold pass is
  // reused but what a machine sets up once (the torch PCH, torch's build
  // facts, the sandbox probe). New problems, as a data-synthesis run poses
  // them.
  bool fresh = false;
  bool stock = true;
  // Run the stock path on this many of the candidates, spread evenly over the
  // list (0: all). It costs ~50 s a candidate on an H200, nearly all of it
  // load_inline's compile, which varies little from one candidate to the next.
  int stock_sample = 0;
  std::chrono::seconds stock_deadline{900};
  int stock_trials = 5;
  int stock_warmup = 3;
  int stock_iters = 100;
  std::filesystem::path work;  // Caches and the stock path's build folders (fresh: the cold pass is cold).
  // Give every candidate's load_inline extension a name of its own (in a copy
  // under work/candidates), so that candidates sharing sources, as in a
  // hand-written suite, do not share a build: in an RL batch every candidate is
  // new. Off: the candidates as they are.
  bool distinct_builds = true;
};

// The stock path's mean seconds per candidate over the whole set when it ran
// on a sample: a sampled candidate counts what it took; one it did not run
// counts the mean of the sampled ones of its kind — those anvil's cold pass
// found to hang (status timeout), which cost the stock path its limit, and
// the others — so a sample that over- or under-represents hangs does not
// skew the rate. nullopt when the stock path ran on every candidate or on
// none.
std::optional<double> EstimatedStockSeconds(const ThroughputReport& r);

// `text` with the extension name of each load_inline call (its `name=` string)
// given `suffix`; `renamed` counts them.
std::string RenameExtensions(const std::string& text, const std::string& suffix, int* renamed);

using BenchProgress = std::function<void(const std::string& pass, std::size_t done, std::size_t total)>;

// Runs the passes; each anvil pass writes its verdicts, as they come, to
// work/<pass>_verdicts.jsonl (cold, warm, steady, fresh). `evaluators` share `evaluators[0]`'s options, whose
// cache_dir must be empty (the cold pass).
ThroughputReport RunThroughputBench(const std::vector<Evaluator*>& evaluators, const Backend& backend,
                                    const std::vector<Job>& jobs, const BatchOptions& batch,
                                    const ThroughputOptions& options, const BenchProgress& progress);

// The report as Markdown (tables) and as JSON.
std::string ThroughputMarkdown(const ThroughputReport& report);
std::string ThroughputJson(const ThroughputReport& report);

}  // namespace anvil
