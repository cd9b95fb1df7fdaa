#include "cli/eval_flags.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <thread>

#include "cache/byte_size.h"
#include "core/cgroup.h"
#include "core/environment.h"
#include "run/device_memory.h"

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
                  "Tasks whose inputs + outputs per trial exceed this are streamed: prepared on their first trial "
                  "alone (no timing or held-out sets of their own), their trials made by the task server on "
                  "request, kept while its budget allows")
      ->capture_default_str();
  cmd->add_option("--trial-server-budget", f.trial_server_budget,
                  "Memory the task server may keep tasks' inputs in, least recently used tasks evicted: a size "
                  "(4G) or 'auto' (half the device's free memory at its start)")
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
  cmd->add_option("--quota-memory", f.quota_memory,
                  "Memory each candidate process may use, in a control group of its own (the kernel kills it "
                  "past that: runtime_error): a size (8G, 512M), 'auto' (the memory available to anvil over the "
                  "slots side by side) or 'none'; a size is capped at 'auto'")
      ->capture_default_str();
  cmd->add_option("--quota-pids", f.quota_pids, "Processes and threads each candidate may have at once (0: no quota)")
      ->capture_default_str();
  cmd->add_option("--quota-cpu", f.quota_cpu,
                  "CPU seconds each candidate run process may use, its threads together (past it the kernel stops "
                  "it: timeout): a number, 'auto' (twice --timeout on every CPU: a backstop) or 'none'")
      ->capture_default_str();
  cmd->add_option("--quota-device-memory", f.quota_device_memory,
                  "Device memory each candidate run may hold (cuda backend), its processes together by the "
                  "driver's count (NVML), read every 20 ms: past it anvil kills the run (runtime_error, stage "
                  "device_memory_quota): a size (40G), 'auto' (half the device's memory; the other half is the task "
                  "server's) or 'none'")
      ->capture_default_str();
  cmd->add_option("--cache-max-size", f.cache_max_size,
                  "Bound on the cache folder, kept by evicting least recently used entries while anvil runs (as "
                  "`anvil cache prune --max-size` does), besides keeping its disk above anvil's free-space floor: a "
                  "size (50G), 'auto' (half the disk holding it) or 'none' (the floor alone)")
      ->capture_default_str();
  cmd->add_option("--infra-retries", f.infra_retries,
                  "Times an infra_error that came while the candidate ran is tried again, alone on the machine and "
                  "after a health probe; if every try fails so, the verdict is runtime_error with "
                  "suspect_candidate (0: never)")
      ->capture_default_str()
      ->check(CLI::Range(0, 10));
  cmd->add_option("--idle-device-wait", f.idle_device_wait,
                  "Seconds anvil waits, before retrying a verdict whose device ran out of memory, for other "
                  "processes on the device to leave; then the verdict stays infra_error (docs/verdict.md)")
      ->capture_default_str()
      ->check(CLI::Range(0, 3600));
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
  o.held_out_auto = f.held_out == "auto";
  if (f.trial_server_budget != "auto") {
    auto bytes = ParseByteSize(f.trial_server_budget);
    if (!bytes.ok() || bytes.value() == 0) {
      return Status::Error("--trial-server-budget: " + (bytes.ok() ? std::string("a size above 0") : bytes.message()) +
                           " (or 'auto')");
    }
    o.trial_server_budget = static_cast<int64_t>(bytes.value());
  }
  auto policy = PolicyNamed(f.policy);
  if (!policy.ok()) return policy.status();
  o.policy = policy.value();
  auto quota = RunQuota(f);
  if (!quota.ok()) return quota.status();
  o.run_quota = quota.value();
  o.infra_retries = f.infra_retries;
  o.idle_device_wait = std::chrono::seconds(f.idle_device_wait);
  if (f.cache_max_size == "none") {
    o.cache_bound = CacheBound{};
  } else if (f.cache_max_size != "auto") {
    auto bytes = ParseByteSize(f.cache_max_size);
    if (!bytes.ok()) return Status::Error("--cache-max-size: " + bytes.message() + " (or 'auto', 'none')");
    o.cache_bound = CacheBound{bytes.value()};
  }
  return o;
}

namespace {

// "8G", "512M", "1.5GiB", "1048576": bytes; nullopt when malformed.
std::optional<std::uint64_t> ParseSize(const std::string& text) {
  std::size_t used = 0;
  double number = 0;
  try {
    number = std::stod(text, &used);
  } catch (...) {
    return std::nullopt;
  }
  std::string unit = text.substr(used);
  for (char& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (unit.size() > 1 && unit.back() == 'B') unit.pop_back();
  if (unit.size() > 1 && unit.back() == 'I') unit.pop_back();
  double scale = 1;
  if (unit == "K") {
    scale = 1024.0;
  } else if (unit == "M") {
    scale = 1024.0 * 1024;
  } else if (unit == "G") {
    scale = 1024.0 * 1024 * 1024;
  } else if (unit == "T") {
    scale = 1024.0 * 1024 * 1024 * 1024;
  } else if (!unit.empty() && unit != "B") {
    return std::nullopt;
  }
  if (number < 0) return std::nullopt;
  return static_cast<std::uint64_t>(number * scale);
}

// Devices side by side, as DevicesFor counts them (1 when --backend or
// --gpus is malformed: they are refused later, by name).
// The candidate processes that may be alive at once (pipeline/job_stream.h):
// each device's runs and, with compiles ahead, the places of its queue for
// timed calls (at most kTimingQueuePerRunSlot per run slot), and the
// extractions and builds ahead. Their quotas together stay within what is
// available.
std::uint64_t QuotaSlots(const EvalFlags& f) {
  auto backend = Backend::FromName(f.backend);
  if (!backend.ok()) return static_cast<std::uint64_t>(std::max(1, f.jobs));
  auto devices = DevicesFor(backend.value(), f.gpus);
  const std::uint64_t n = devices.ok() ? devices.value().size() : 1;
  const BatchOptions batch = ToBatchOptions(f, backend.value());
  const std::uint64_t runs = static_cast<std::uint64_t>(std::max(1, batch.parallel)) * n;
  const std::uint64_t ahead = static_cast<std::uint64_t>(std::max(0, batch.compile_ahead));
  return runs * (ahead > 0 ? 1 + kTimingQueuePerRunSlot : 1) + ahead;
}

}  // namespace

Result<JobQuota> RunQuota(const EvalFlags& f) {
  JobQuota q;
  const bool named = f.quota_memory != "auto" && f.quota_memory != "none";
  std::optional<std::uint64_t> asked;
  if (named) {
    asked = ParseSize(f.quota_memory);
    if (!asked) {
      return Status::Error("--quota-memory takes a size (8G, 512M, bytes), 'auto' or 'none', not '" + f.quota_memory +
                           "'");
    }
  }
  if (f.quota_memory != "none" && (!asked || *asked > 0)) {
    if (!JobCgroup::CanLimitMemory()) {
      if (named) {
        return Status::Error("--quota-memory " + f.quota_memory + ": this machine cannot keep it (" +
                             JobCgroup::Mechanisms() + "); use --quota-memory none to run without");
      }
    } else {
      const std::uint64_t share = JobCgroup::MemoryAvailable() / QuotaSlots(f);
      q.memory_bytes = asked ? std::min(*asked, share) : share;
      q.memory_automatic = !asked;
    }
  }
  if (f.quota_cpu == "auto") {
    const unsigned cpus = std::max(1u, std::thread::hardware_concurrency());
    q.cpu_seconds = static_cast<std::uint64_t>(std::ceil(2 * std::max(1.0, f.timeout) * cpus));
  } else if (f.quota_cpu != "none") {
    if (f.quota_cpu.empty() || f.quota_cpu.size() > 12 ||
        f.quota_cpu.find_first_not_of("0123456789") != std::string::npos) {
      return Status::Error("--quota-cpu takes whole seconds, 'auto' or 'none', not '" + f.quota_cpu + "'");
    }
    q.cpu_seconds = std::stoull(f.quota_cpu);  // 0: none.
  }
  std::optional<std::uint64_t> device_asked;
  if (f.quota_device_memory != "auto" && f.quota_device_memory != "none") {
    device_asked = ParseSize(f.quota_device_memory);
    if (!device_asked) {
      return Status::Error("--quota-device-memory takes a size (40G, 512M, bytes), 'auto' or 'none', not '" +
                           f.quota_device_memory + "'");
    }
  }
  if (f.quota_device_memory != "none" && f.backend == "cuda") {
    std::string why_not;
    auto reader = NvmlReader(&why_not);
    if (reader == nullptr && device_asked && *device_asked > 0) {
      return Status::Error("--quota-device-memory " + f.quota_device_memory + ": this machine cannot keep it (" +
                           why_not + "); use --quota-device-memory none to run without");
    }
    if (reader != nullptr) q.device_memory_bytes = device_asked ? *device_asked : reader->DeviceBytes() / 2;
  }
  if (f.quota_pids < 0) return Status::Error("--quota-pids takes 0 (none) or more");
  if (f.quota_pids > 0) {
    if (JobCgroup::CanLimitPids()) {
      q.pids = f.quota_pids;
    } else if (f.quota_pids != EvalFlags().quota_pids) {
      return Status::Error("--quota-pids " + std::to_string(f.quota_pids) + ": this machine cannot keep it (" +
                           JobCgroup::Mechanisms() + "); use --quota-pids 0 to run without");
    }
  }
  return q;
}

}  // namespace anvil
