// The evaluation flags `anvil eval` and `anvil kernelbench` share: registered
// once on each command, translated once into EvalOptions.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "pipeline/batch.h"
#include "pipeline/evaluator.h"

namespace CLI {
class App;
}  // namespace CLI

namespace anvil {

struct EvalFlags {
  std::string backend = "cpu";
  int trials = 5;
  double timeout = 120;
  double compile_timeout = 600;
  bool no_perf = false;
  int warmup = 3;
  int iters = 20;
  std::string baselines = "eager,compile";
  std::string cache_dir;
  int64_t max_trial_bytes = int64_t{1} << 30;
  std::string trial_server_budget = "auto";
  bool quiet = false;
  int jobs = 1;  // Candidates evaluated side by side (per GPU).
  int compile_jobs = -1;
  std::string held_out = "none";  // "none" | "auto": held-out input sets for tasks without a sidecar's.     // Compiles
                                  // ahead of the runs, node-wide; -1: CompileAhead's default.
  std::string gpus = "all";       // How many GPUs of the node: a number or "all".
  std::string policy = "musacoder";          // The verdict policy (verify/policy.h).
  std::string quota_memory = "auto";         // Each candidate process's memory: a size, "auto" or "none".
  int quota_pids = 4096;                     // Its processes and threads at once; 0: none.
  std::string quota_cpu = "auto";            // A run process's CPU seconds: a number, "auto" or "none".
  std::string quota_device_memory = "auto";  // A cuda run's device memory: a size, "auto" or "none".
  int infra_retries = 2;                     // EvalOptions::infra_retries.
  int idle_device_wait = 120;                // Seconds: EvalOptions::idle_device_wait.
  std::string cache_max_size = "auto";       // A size, 'auto' (half the cache's disk) or 'none'.
};

// The candidate processes' quotas from --quota-memory and --quota-pids: a
// size ("8G", "512M", bytes) is capped at the memory available to anvil ÷
// the candidate processes that may be alive at once (--jobs × GPUs, times 4
// with builds ahead: the timed calls' queue; plus --compile-jobs), so that
// the quotas admitted at once never sum past it; "auto" is that share,
// "none" or 0 none. Where this machine cannot keep a quota (no writable control group),
// "auto" and the default pids quota mean none; a quota asked for by name is
// an error. --quota-cpu: CPU seconds of each run process (RLIMIT_CPU), "auto"
// being twice --timeout on every CPU of the machine (the trials and the timed
// calls each get the deadline: a backstop that no run within its deadlines
// reaches), "none" or 0 none.
Result<JobQuota> RunQuota(const EvalFlags& flags);

// The devices --gpus names: one backend per GPU (Backend::OnDevice) when
// there are several, else the backend itself. Error for a malformed --gpus or
// more GPUs than the node has.
Result<std::vector<Backend>> DevicesFor(const Backend& backend, const std::string& gpus);

// One evaluator per GPU that --gpus names (one for the cpu backend), for
// RunJobs.
struct Evaluators {
  std::vector<std::unique_ptr<Evaluator>> owned;
  std::vector<Evaluator*> all;
  Evaluator& first() { return *all.front(); }
};
// Error for a malformed --gpus or more GPUs than the node has.
Result<Evaluators> MakeEvaluators(const Backend& backend, const EvalOptions& options, const std::string& gpus);

void AddEvalFlags(CLI::App* cmd, EvalFlags& flags);

// The batch's shape from --jobs and --compile-jobs. By default a GPU backend
// compiles ahead on half the node's cores (a compile is nvcc and g++ at once);
// the cpu backend does not, its CPUs being the device its timed runs need.
BatchOptions ToBatchOptions(const EvalFlags& flags, const Backend& backend);

// Everything but the backend, which the caller resolves (and reports) itself.
// Error for a malformed --baselines list.
Result<EvalOptions> ToEvalOptions(const EvalFlags& flags);

}  // namespace anvil
