#include "cli/eval_flags.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <thread>

#include "core/environment.h"

namespace anvil {

void AddEvalFlags(CLI::App* cmd, EvalFlags& f) {
  cmd->add_option("-b,--backend", f.backend, "cpu or cuda")->capture_default_str();
  cmd->add_option("--trials", f.trials, "Correctness trials, fresh random inputs each")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cmd->add_option("--timeout", f.timeout,
                  "Seconds allowed per candidate process (run, then perf); 20 for the bundled examples")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--compile-timeout", f.compile_timeout, "Seconds allowed per compiler call")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_flag("--no-perf", f.no_perf, "Skip timing (gate 4) and baselines");
  cmd->add_option("--warmup", f.warmup, "Warmup calls before timing")->capture_default_str();
  cmd->add_option("--iters", f.iters, "Timed calls")->check(CLI::Range(1, 100000))->capture_default_str();
  cmd->add_option("--baselines", f.baselines, "Baselines to time: eager, compile (comma-separated), or none")
      ->capture_default_str();
  cmd->add_option("--cache-dir", f.cache_dir, "Cache folder (default $ANVIL_CACHE_DIR or ~/.cache/anvil)");
  cmd->add_option("--max-trial-bytes", f.max_trial_bytes,
                  "Tasks whose inputs + outputs per trial exceed this are streamed: each trial is made when "
                  "needed and deleted after, instead of cached")
      ->capture_default_str();
  cmd->add_option("--max-scratch-bytes", f.max_scratch_bytes,
                  "Streamed trials are made all at once when they fit in the scratch folder (/dev/shm when it has "
                  "room, else $ANVIL_SCRATCH_DIR or $TMPDIR) and in this many bytes; otherwise one at a time "
                  "(0: no limit beyond the free space)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_flag("-q,--quiet", f.quiet, "No progress display");
  cmd->add_option("-j,--jobs", f.jobs,
                  "Candidates evaluated side by side: compiles, start-up and correctness runs overlap, while timed "
                  "runs (candidates' and baselines') still get the device alone")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  cmd->add_option("--held-out", f.held_out,
                  "Held-out input sets (catalog C1) for tasks whose sidecar declares none: 'auto' adds one with "
                  "batch_size one smaller where the reference takes it (kernelbench-format candidates must be right "
                  "on it too); 'none' keeps the sidecars' only")
      ->check(CLI::IsMember({"none", "auto"}))
      ->capture_default_str();
  cmd->add_option("--compile-jobs", f.compile_jobs,
                  "Candidates extracted and compiled at once ahead of the runs, node-wide, so the CPUs build later "
                  "candidates while the GPUs run earlier ones (default: half the CPU cores with a GPU backend, 0 "
                  "with cpu; 0: no compiling ahead)")
      ->check(CLI::Range(0, 1024));
  cmd->add_option("--policy", f.policy,
                  "Rules that decide what is correct and legal (docs/rules.md): musacoder (the MusaCoder paper's: "
                  "custom kernels only), kernelbench (KernelBench's eval: torch ops allowed, its static checker), "
                  "kernelbench-v0.1 (the published leaderboard's: fp32 tolerance 1e-2, no static checker)")
      ->check(CLI::IsMember(PolicyNames()))
      ->capture_default_str();
  cmd->add_option("--gpus", f.gpus,
                  "GPUs of this node to use (cuda): a number or 'all' (those $CUDA_VISIBLE_DEVICES allows); each "
                  "gets --jobs slots and its candidates' processes see it alone (CUDA_VISIBLE_DEVICES)")
      ->capture_default_str();
}

BatchOptions ToBatchOptions(const EvalFlags& f, const Backend& backend) {
  BatchOptions b;
  b.parallel = f.jobs;
  b.compile_ahead = f.compile_jobs;
  if (b.compile_ahead < 0) {
    const int cores = static_cast<int>(std::thread::hardware_concurrency());
    b.compile_ahead = backend.kind() == BackendKind::kCpu ? 0 : std::max(1, cores / 2);
  }
  return b;
}

Result<std::vector<Backend>> DevicesFor(const Backend& backend, const std::string& gpus) {
  int count = 1;
  if (backend.kind() == BackendKind::kCuda && gpus != "1") {
    const int present = backend.DeviceCount();
    if (gpus == "all") {
      count = std::max(present, 1);
    } else {
      char* end = nullptr;
      const long n = std::strtol(gpus.c_str(), &end, 10);
      if (end == gpus.c_str() || *end != '\0' || n < 1) {
        return Status::Error("--gpus takes a number of GPUs or 'all', not '" + gpus + "'");
      }
      if (present > 0 && n > present) {
        return Status::Error("--gpus " + gpus + ": this node has " + std::to_string(present) + " GPU(s)");
      }
      count = static_cast<int>(n);
    }
  }
  std::vector<Backend> devices;
  for (int i = 0; i < count; ++i) devices.push_back(count > 1 ? backend.OnDevice(i) : backend);
  return devices;
}

Result<Evaluators> MakeEvaluators(const Backend& backend, const EvalOptions& options, const std::string& gpus) {
  auto devices = DevicesFor(backend, gpus);
  if (!devices.ok()) return devices.status();
  Evaluators e;
  for (const Backend& device : devices.value()) {
    e.owned.push_back(std::make_unique<Evaluator>(device, options));
    e.all.push_back(e.owned.back().get());
  }
  return e;
}

Result<EvalOptions> ToEvalOptions(const EvalFlags& f) {
  EvalOptions o;
  std::stringstream list(f.baselines);
  for (std::string item; std::getline(list, item, ',');) {
    if (item != "eager" && item != "compile" && item != "none") {
      return Status::Error("--baselines takes eager, compile or none (comma-separated), not '" + item + "'");
    }
  }
  o.cache_dir = f.cache_dir.empty() ? DefaultCacheDir() : std::filesystem::path(f.cache_dir);
  o.trials = f.trials;
  o.run_deadline = std::chrono::milliseconds(static_cast<int64_t>(f.timeout * 1000));
  o.compile_deadline = std::chrono::seconds(static_cast<int64_t>(f.compile_timeout));
  o.perf = !f.no_perf;
  o.warmup = f.warmup;
  o.iters = f.iters;
  o.baseline_eager = f.baselines.find("eager") != std::string::npos;
  o.baseline_compile = f.baselines.find("compile") != std::string::npos;
  o.max_trial_bytes = f.max_trial_bytes;
  o.max_scratch_bytes = f.max_scratch_bytes;
  o.held_out_auto = f.held_out == "auto";
  auto policy = PolicyNamed(f.policy);
  if (!policy.ok()) return policy.status();
  o.policy = policy.value();
  return o;
}

}  // namespace anvil
