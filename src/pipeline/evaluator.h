// The five gates for one candidate (DESIGN.md): prepare(task) -> compile ->
// run -> correct -> legal -> perf -> verdict. A bad candidate always ends in a
// verdict; only a broken task or environment is an error. An Evaluator caches
// the torch probe and prepared tasks; Evaluate may be called from several
// threads at once (their device work then goes through one DeviceGate).
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "backend/backend.h"
#include "backend/torch_info.h"
#include "cache/cache_keeper.h"
#include "compile/build.h"
#include "core/cgroup.h"
#include "pipeline/device_gate.h"
#include "pipeline/slots.h"
#include "run/candidate_run.h"
#include "tasks/prepare.h"
#include "tasks/task.h"
#include "tasks/task_server.h"
#include "verify/reward.h"
#include "verify/verdict.h"

namespace anvil {

struct EvalOptions {
  std::filesystem::path cache_dir;                 // Required.
  std::string format;                              // "" = detect; "kernelbench" | "native".
  int trials = 5;                                  // Correctness trials, fresh inputs each.
  std::chrono::seconds compile_deadline{600};      // Per compiler call, and for source extraction.
  std::chrono::milliseconds run_deadline{120000};  // Per candidate process (trials, then perf).
  bool perf = true;                                // Time correct, legal candidates.
  int warmup = 3;
  int iters = 20;
  bool baseline_eager = true;
  bool baseline_compile = true;
  Policy policy;  // The rules verdicts are judged under (verify/policy.h).
  // False: the static rules' cheat hits are evidence and the candidate runs
  // (as ANVIL_STATIC_VERDICTS=0; the task probe's reference needs it).
  bool static_verdicts = true;
  std::optional<double> atol, rtol;  // Override every dtype's tolerance (and the policy's).
  RewardOptions reward;
  bool keep_work = false;                      // Keep the run folder (outputs, logs).
  int64_t max_trial_bytes = int64_t{1} << 30;  // Larger trials are streamed, not cached.
  // Tasks whose sidecar declares no held-out input sets get one made for them
  // (batch_size one smaller; Task::held_out_json "auto"), catalog C1.
  bool held_out_auto = false;
  // Each candidate process's quotas (core/cgroup.h; RunQuota in
  // cli/eval_flags.h makes them from the flags); zeros: none.
  JobQuota run_quota;
  // An infra_error that came while the candidate's code ran is tried again up
  // to this many times, each alone on the machine after a health probe
  // (pipeline/infra_retry.cc); 0: never.
  int infra_retries = 2;
  // Before retrying a verdict whose device ran out of memory (the run's, or
  // the task server's), anvil waits this long at most for processes other
  // than its own to leave the device; then the verdict stays infra_error.
  std::chrono::milliseconds idle_device_wait{120000};
  // The trials come from the device's task server (tasks/task_server.h:
  // inputs made from their seeds, passed as memfds; outputs handed back and
  // compared there), streamed tasks too. Its memory budget: 0 for half the
  // device's free memory.
  int64_t trial_server_budget = 0;
  // The cache's bound, kept by evicting least recently used entries
  // (cache/cache_keeper.h); unset: half the disk holding it, and its floor.
  std::optional<CacheBound> cache_bound;
};

// How many input sets the timed calls rotate through, each one's last output
// checked again: the task's timing sets (never seen by a trial); without them
// the trials' sets (those some call uses); none for streamed tasks (GBs per
// set: timed on trial 0 alone).
int RecheckSets(const PreparedTask& prepared, const EvalOptions& options);

// An output's tolerance: the policy's for its dtype, then the task sidecar's,
// then --atol/--rtol (Verdict::policy records the last two as overrides).
Tolerance TrialTolerance(const Task& task, DType dtype, const EvalOptions& options);

// Where a batch has an evaluation wait its turn (pipeline/batch.h): its
// extraction and compile take a slot of `compile` (the node's CPUs), its
// candidate runs (trials, timed calls) a slot of `run` (its device). Null: no
// waiting.
struct Lanes {
  Slots* compile = nullptr;
  Slots* run = nullptr;
  // Places for candidates that gave their run slot back to wait for their
  // timed calls (their processes stay alive on the device).
  Slots* timing_queue = nullptr;
};

// Why no candidate can be judged now: anvil's hard open-file limit is below
// what each candidate process is promised (its soft limit is raised to the
// hard one on the way), or the disk of the cache or of the temporary folder
// is below anvil's free-space floor (core/files.h); nullopt: room enough.
std::optional<std::string> NoRoomToJudge(const std::filesystem::path& cache_dir);

// ANVIL_INJECT_INFRA=TEXT[:N]: the first N runs (default: all) of candidates
// whose path contains TEXT fail as if the machine had failed under them
// (infra_error): to see how retries, and a trainer, treat the machine's
// failures. Counted per process. Thread-safe.
bool InjectedInfraFault(const std::filesystem::path& candidate);

// "kernelbench" for .py files, "native" for .cpp/.cc/.cu; error otherwise.
Result<std::string> DetectFormat(const std::filesystem::path& candidate);

class Evaluator {
 public:
  // `gate`: the device's gate, shared with other evaluators of the same
  // device (the reward service judges under several policies at once, each
  // its own evaluator); null: one of its own.
  Evaluator(Backend backend, EvalOptions options, std::shared_ptr<DeviceGate> gate = nullptr);
  // Waits for preparations still running (an evaluation that ended early,
  // e.g. on static evidence, does not wait for its task's).
  ~Evaluator();
  Evaluator(const Evaluator&) = delete;
  Evaluator& operator=(const Evaluator&) = delete;

  // prepare(task), cached. Error names the task and what is wrong with it.
  Result<PreparedTask> Prepare(const Task& task);
  // The same, started now on a thread of its own; evaluations of one task
  // share one preparation (a failed one is tried again by the next caller).
  std::shared_future<Result<PreparedTask>> PrepareAsync(const Task& task);
  // True for the first evaluation to ask of a task prepared now (not found
  // in the cache): its verdict counts the preparation's device work.
  bool FirstToUse(const PreparedTask& prepared);
  // Drops what it holds of prepared tasks (and their locks), so that they can
  // be removed from the cache; the next evaluation of a task prepares it or
  // finds it again. Not while evaluations run.
  void ForgetTasks();
  // Every gate for one candidate of `task` (prepares the task first). The
  // only place an infra_error is tried again (pipeline/infra_retry.cc): up to
  // EvalOptions::infra_retries times, alone among this process's evaluations,
  // each after the machine judged its health probe (a bundled relu) right; if
  // every try fails so, the verdict is runtime_error, `suspect_candidate`.
  // A device that ran out of memory while other processes held some of it
  // (Verdict::device_busy) is tried again once they left, and stays
  // infra_error if they do not.
  Verdict Evaluate(const Task& task, const std::filesystem::path& candidate, const Lanes& lanes = {});

  const Backend& backend() const { return backend_; }
  const EvalOptions& options() const { return options_; }
  // The torch version in use; "" until the first Prepare.
  std::string torch_version();

 private:
  // One try of every gate.
  Verdict EvaluateOnce(const Task& task, const std::filesystem::path& candidate, const Lanes& lanes);
  // Whether this machine judges a known-good candidate (the bundled relu
  // task and its honest kernel for this backend) `pass`; an error says what
  // it got instead. Perf off; through an evaluator of its own.
  Status ProbeHealth();
  // Whether no process but anvil's planned ones holds device memory, within
  // EvalOptions::idle_device_wait (NVML's count; Ok where NVML is not); an
  // error names who held it.
  Status WaitForIdleDevice();
  // Whether this machine can judge `task` at all: its own reference run as a
  // kernelbench-format candidate (`ModelNew = Model`), under the
  // kernelbench-v0.1 policy with the static rules' verdicts off, gets a
  // verdict other than an infra_error from while it ran. Ok where the task has
  // no Model to run. Perf off; through an evaluator of its own.
  Status ProbeTask(const Task& task);
  // The probes' evaluator in `slot`, made on first use: this one's options,
  // perf and retries off, then `adjust`ed.
  Evaluator* ProbeEvaluator(std::unique_ptr<Evaluator>& slot, const std::function<void(EvalOptions&)>& adjust);
  Result<TorchInfo> Torch();
  // Sandbox layers to leave out on this machine (probed once; see
  // integrity/candidate_sandbox.h).
  std::string SandboxSwitches(const TorchInfo& torch);
  // The task's init arguments (TaskInitArgs), cached.
  Result<std::filesystem::path> InitArgs(const Task& task);
  // Every gate. Extraction and the compile overlap the task's preparation
  // (`preparing`; not valid without a device), which the run waits for; the
  // run's folder (memory-backed scratch for a streamed task when the budget
  // allows: pipeline/scratch_budget.h) is made once the candidate is built and
  // has its run slot.
  void Gates(const Task& task, const std::shared_future<Result<PreparedTask>>& preparing,
             const std::filesystem::path& candidate, const Lanes& lanes, Verdict& v);
  // The fields every candidate run shares: candidate, format, artifacts,
  // deadline, and the sandbox's inputs.
  RunRequest BaseRequest(const std::filesystem::path& candidate, const Verdict& v, const TorchInfo& torch);
  struct CheckedRun {
    std::filesystem::path out_dir;  // The last process's folder (its kernel trace).
    // That process, when its timed calls started (or it abused the clock):
    // gate 4 judges it. Its seconds are those after the trials.
    std::optional<RunOutcome> timed;
    // Its timed calls' input sets were written by the task server after each
    // ready (PerfGate::timed_inputs).
    bool sets_written = false;
    // The task server's comparisons of the rechecked timed sets (a session
    // with timed sets): gate 4 reads these.
    std::optional<nlohmann::json> server_rechecks;
  };
  // Runs the trials (gate 1) and compares them (gate 2); with perf on, the
  // last process goes on to the timed calls once its trials passed. Before
  // it waits for the device alone, it calls `release_run_slot`: a candidate
  // queued for its timed calls no longer runs (a streamed task's keeps its
  // slot: its child holds GBs on the device).
  CheckedRun RunAndCheck(const Task& task, const PreparedTask& prepared, const TorchInfo& torch,
                         const std::filesystem::path& candidate, const std::filesystem::path& work,
                         const std::function<void()>& release_run_slot, Verdict& v);
  // What a comparing task server session needs: the reference's seed and
  // TF32 switch, every dtype's tolerance, the trivial guard's atol factors.
  TrialCompare ServerCompare(const Task& task, const PreparedTask& prepared) const;
  void FinishCorrectness(Verdict& v);
  // Gate 4 on a candidate that passed gates 1-3: its timed calls (in
  // pipeline/perf_gate.cc).
  void JudgePerf(const Task& task, const PreparedTask& prepared, const CheckedRun& run, Verdict& v);
  // A baseline the task server measures (BaselineOptions::measure): the
  // baseline worker's JSON, or the server's failure.
  Result<std::string> ServerBaseline(const Task& task, const PreparedTask& prepared, BaselineMode mode,
                                     const BaselineOptions& options, const BaselineHooks& hooks);

  Backend backend_;
  EvalOptions options_;
  std::mutex mu_;
  std::optional<TorchInfo> torch_;
  std::optional<std::string> sandbox_switches_;
  // By task sha256. Held until the evaluator ends: its destructor waits for
  // preparations still running.
  std::map<std::string, std::shared_future<Result<PreparedTask>>> preparing_;
  std::set<std::string> used_;                              // Prepared folders made now that an evaluation used.
  std::map<std::string, std::filesystem::path> init_args_;  // By task sha256.
  std::unique_ptr<Evaluator> probe_;                        // ProbeHealth's, made on first use.
  std::unique_ptr<Evaluator> task_probe_;                   // ProbeTask's, made on first use.
  std::shared_ptr<CacheKeeper> keeper_;                     // Shared by the evaluators of this cache.
  // Evaluations side by side share the device; timed runs get it alone.
  std::shared_ptr<DeviceGate> gate_;
  DeviceGate& device_;
  std::future<void> server_start_;  // The task server's early start; waited for at the end.
};

}  // namespace anvil
