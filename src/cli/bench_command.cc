// `anvil bench throughput`: anvil against the stock path on the same
// candidates (src/bench/throughput.h).
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>

#include "bench/throughput.h"
#include "cli/commands.h"
#include "cli/eval_flags.h"
#include "core/files.h"
#include "report/kernelbench_layout.h"

namespace anvil {
namespace fs = std::filesystem;
namespace {

struct BenchArgs : EvalFlags {
  std::string run_dir;
  std::string kernelbench;
  std::string work;
  std::string json_out;
  std::string md_out;
  bool no_stock = false;
  bool no_anvil = false;
  bool no_warm = false;
  bool steady = false;
  bool fresh = false;
  double stock_timeout = 900;
  int stock_trials = 5;
  int stock_iters = 100;
  int stock_sample = 0;
  bool shared_builds = false;
};

int Run(const BenchArgs& a) {
  auto backend = Backend::FromName(a.backend);
  if (!backend.ok()) {
    std::fprintf(stderr, "anvil bench throughput: %s\n", backend.message().c_str());
    return kExitUsage;
  }
  if (!backend.value().HasDevice()) {
    std::fprintf(stderr, "anvil bench throughput: no %s device on this machine\n", a.backend.c_str());
    return kExitUsage;
  }
  const fs::path root = a.kernelbench.empty() ? DefaultKernelBenchRoot() : fs::path(a.kernelbench);
  auto run = ReadKernelBenchRun(a.run_dir, root);
  if (!run.ok()) {
    std::fprintf(stderr, "anvil bench throughput: %s\n", run.message().c_str());
    return kExitUsage;
  }
  // The stock path takes load_inline candidates only; the comparison uses the same ones.
  std::vector<Job> jobs;
  std::size_t native = 0;
  for (const auto& j : run.value().jobs) {
    if (j.job.candidate.extension() == ".py") {
      jobs.push_back(j.job);
    } else {
      ++native;
    }
  }
  if (jobs.empty()) {
    std::fprintf(stderr, "anvil bench throughput: no kernelbench-format (.py) candidate in %s\n", a.run_dir.c_str());
    return kExitUsage;
  }
  auto options = ToEvalOptions(a);
  if (!options.ok()) {
    std::fprintf(stderr, "anvil bench throughput: %s\n", options.message().c_str());
    return kExitUsage;
  }
  ThroughputOptions t;
  t.stock = !a.no_stock;
  t.anvil = !a.no_anvil;
  t.warm = !a.no_warm;
  t.steady = a.steady;
  t.fresh = a.fresh;
  if (!t.stock && !t.anvil) {
    std::fprintf(stderr, "anvil bench throughput: --no-stock and --no-anvil leave nothing to run\n");
    return kExitUsage;
  }
  t.stock_deadline = std::chrono::seconds(static_cast<int64_t>(a.stock_timeout));
  t.stock_trials = a.stock_trials;
  t.stock_iters = a.stock_iters;
  t.stock_sample = a.stock_sample;
  t.distinct_builds = !a.shared_builds;
  auto work = a.work.empty() ? MakeTempDir("anvil-bench-") : Result<fs::path>(fs::path(a.work));
  if (!work.ok()) {
    std::fprintf(stderr, "anvil bench throughput: %s\n", work.message().c_str());
    return kExitFailure;
  }
  t.work = work.value();
  std::error_code ec;
  if (fs::exists(t.work / "cache", ec) && !fs::is_empty(t.work / "cache", ec)) {
    std::fprintf(stderr, "anvil bench throughput: %s already holds a cache: the cold pass needs a fresh --work\n",
                 (t.work / "cache").c_str());
    return kExitUsage;
  }
  EvalOptions o = options.value();
  o.cache_dir = t.work / "cache";
  auto evaluators = MakeEvaluators(backend.value(), o, a.gpus);
  if (!evaluators.ok()) {
    std::fprintf(stderr, "anvil bench throughput: %s\n", evaluators.message().c_str());
    return kExitUsage;
  }
  const BatchOptions batch = ToBatchOptions(a, backend.value());
  std::fprintf(stderr,
               "anvil bench throughput: %zu candidates (%zu native ones left out: the stock path needs load_inline) "
               "on %s, %zu GPU(s) x %d run slots, %d compiles ahead; work in %s\n",
               jobs.size(), native, a.backend.c_str(), evaluators.value().all.size(), batch.parallel,
               batch.compile_ahead, t.work.c_str());
  const bool tty = isatty(STDERR_FILENO) != 0;
  ThroughputReport report =
      RunThroughputBench(evaluators.value().all, backend.value(), jobs, batch, t,
                         [&](const std::string& pass, std::size_t done, std::size_t total) {
                           if (a.quiet) return;
                           std::fprintf(stderr, "%s[%s %zu/%zu]%s", tty ? "\r\033[K" : "", pass.c_str(), done, total,
                                        tty && done < total ? "" : "\n");
                           std::fflush(stderr);
                         });
  const std::string md = ThroughputMarkdown(report);
  std::printf("%s", md.c_str());
  if (!a.md_out.empty()) {
    if (Status s = WriteFileAtomic(a.md_out, md); !s.ok())
      std::fprintf(stderr, "anvil bench: %s\n", s.message().c_str());
  }
  if (!a.json_out.empty()) {
    if (Status s = WriteFileAtomic(a.json_out, ThroughputJson(report)); !s.ok()) {
      std::fprintf(stderr, "anvil bench: %s\n", s.message().c_str());
    }
  }
  return kExitOk;
}

}  // namespace

void RegisterBench(CLI::App& app, int& exit_code) {
  CLI::App* bench = app.add_subcommand("bench", "Benchmarks of anvil itself");
  bench->require_subcommand(1);
  auto args = std::make_shared<BenchArgs>();
  args->trials = 5;
  args->iters = 100;
  args->baselines = "eager";
  CLI::App* cmd = bench->add_subcommand(
      "throughput",
      "The same kernelbench-format candidates through anvil (cold caches, then warm) and through the stock path "
      "(a fresh Python process per candidate calling load_inline, then KernelBench's checks): verdicts/hour, "
      "time by stage, overhead per candidate, GPU utilization");
  cmd->add_option("--run", args->run_dir, "KernelBench run folder (level_L_problem_P_sample_S_kernel.py files)")
      ->required();
  cmd->add_option("--kernelbench", args->kernelbench,
                  "Folder holding level1/, level2/, ... (default: $ANVIL_KERNELBENCH or ../shared/kernelbench)");
  AddEvalFlags(cmd, *args);
  cmd->add_option("--work", args->work, "Fresh folder for the caches and the stock builds (default: a temp folder)");
  cmd->add_option("--json-out", args->json_out, "Write the report as JSON here");
  cmd->add_option("--md-out", args->md_out, "Write the report as Markdown here");
  cmd->add_flag("--no-stock", args->no_stock, "Skip the stock path");
  cmd->add_flag("--no-warm", args->no_warm, "Skip anvil's warm pass (the cold one and the stock path only)");
  cmd->add_flag("--steady", args->steady,
                "After the cold pass, a steady one: every candidate as a new one (built anew) on the same tasks, "
                "whose reference outputs and baselines the cold pass cached: what an RL run sees from its second "
                "step on");
  cmd->add_flag("--fresh", args->fresh,
                "Last, a fresh pass: every candidate as a new one on a new task (copies), reusing only "
                "what a machine sets up once (the torch PCH, torch's build facts, the sandbox probe): new problems, as "
                "a data-synthesis run poses them");
  cmd->add_flag("--no-anvil", args->no_anvil,
                "Skip anvil's passes: the stock path only (more stock samples in a run of their own; each outcome "
                "is logged to <work>/stock_outcomes.jsonl as it comes)");
  cmd->add_option("--stock-timeout", args->stock_timeout, "Seconds per candidate on the stock path")
      ->capture_default_str();
  cmd->add_option("--stock-trials", args->stock_trials, "Correctness trials on the stock path")->capture_default_str();
  cmd->add_option("--stock-iters", args->stock_iters, "Timed calls on the stock path")->capture_default_str();
  cmd->add_option("--stock-sample", args->stock_sample,
                  "Run the stock path on this many candidates, spread evenly (0: all; ~50 s each on an H200)")
      ->capture_default_str();
  cmd->add_flag("--shared-builds", args->shared_builds,
                "Evaluate the candidates as they are: those whose load_inline sources and name match share one "
                "build (by default each gets an extension name of its own, as every candidate of an RL batch is new)");
  cmd->callback([args, &exit_code] { exit_code = Run(*args); });
}

}  // namespace anvil
