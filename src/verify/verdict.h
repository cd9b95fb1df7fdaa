// The verdict: one candidate's status, each gate's data, the reward and the
// feedback text (DESIGN.md "One candidate, five gates"). The JSON form is a
// versioned contract documented in docs/verdict.md and
// docs/verdict.schema.json. Plain value.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "compile/compile_result.h"
#include "core/stats.h"
#include "integrity/kernel_trace.h"
#include "integrity/rule_hit.h"
#include "verify/compare.h"
#include "verify/policy.h"

namespace anvil {

inline constexpr int kVerdictSchemaVersion = 2;

enum class VerdictStatus { kPass, kCompileError, kRuntimeError, kTimeout, kWrongAnswer, kCheat, kInfraError };
const char* StatusName(VerdictStatus status);
// The status StatusName calls `name`; none for any other text.
std::optional<VerdictStatus> StatusFromName(const std::string& name);

struct RunGate {
  bool ran = false;
  bool ok = false;
  double seconds = 0;
  double deadline_seconds = 0;
  // Of `seconds`, the worker's own start (up to when it could load the
  // candidate): the deadline counts from its end.
  double ready_seconds = 0;
  bool timed_out = false;
  int exit_code = 0;
  int term_signal = 0;
  std::string stage;  // Where it failed: import, init, forward, output, native, exit, ...
  std::string message;
  std::string traceback;
  std::string stderr_tail;
  int trials_completed = 0;
  // Sandbox layers in force for the candidate's processes (core/sandbox.h);
  // empty when ANVIL_SANDBOX=0 turned it off.
  std::vector<std::string> sandbox;
  // kernelbench format: aten compute ops (outside the plumbing allowlist)
  // that the trials' forwards dispatched, "aten.mm.default x1", and tensor
  // data they handed to Python or numpy, "Tensor.numpy x5" (any is a cheat).
  std::vector<std::string> aten_compute;
  std::vector<std::string> host_compute;
  std::string compute_seen_in;  // The forward where either was seen first: "trial 0", "timed call 3".
  // What the candidate's code replaced at run time of what anvil's worker
  // relies on (python/anvil_py/tamper_guard.py), with when it was found as
  // the last entry ("after trial 0"); any is a cheat (run.tamper).
  std::vector<std::string> tampered;
  // Files of the worker's folder that changed after the worker wrote them (its
  // seals, sent on a channel the candidate cannot rewrite, do not match), or
  // that it never wrote: any is a cheat (run.forged_output).
  std::vector<std::string> forged;
  // Outputs of timed calls that changed after their call had returned (the
  // worker looked at some of their elements right at the return, its signals
  // held, and again before the next call): any is a cheat (run.after_return).
  std::vector<std::string> after_return;
  // Where the candidate process's time went, from its own clock (docs/protocol.md,
  // timeline.json): start (anvil's spawn to the worker's first line: fork or
  // exec, interpreter, imports), cuda_init, load (building the model, loading
  // its extensions), trials (their forwards, inputs and outputs).
  std::map<std::string, double> phase_seconds;
  // Where the trials' inputs came from: "files" (the prepared folder) or
  // "server" (a task server session: memfds, tasks/task_server.h).
  std::string trial_data;
  // The run held the device alone from its first trial (a task whose task
  // server session does not fit the server's budget: tasks/task_server.h).
  bool device_alone = false;
};

struct OutputCheck {
  std::string name;
  std::string dtype;
  Tolerance tolerance;
  CompareResult result;
};

struct TrialCheck {
  int trial = 0;
  bool ok = false;
  std::string problem;  // "", "output count", or the first failing output's problem.
  std::vector<OutputCheck> outputs;
};

struct CorrectGate {
  bool ran = false;
  bool ok = false;  // Every trial and every held-out set matched.
  int trials = 0;
  int passed = 0;
  std::vector<TrialCheck> details;
  // The task's held-out input sets (catalog C1: shapes the benchmark does not
  // show), kernelbench format: what each changed ("batch_size=5") and its check.
  std::vector<std::string> held_out_sets;
  std::vector<TrialCheck> held_out;
};

struct LegalGate {
  bool ran = false;
  bool ok = true;
  std::vector<RuleHit> hits;
  std::string python_parse_error;
};

struct PerfGate {
  bool ran = false;
  std::string skipped;  // Why it did not run.
  int warmup = 0;
  int iters = 0;
  TimingStats candidate;  // The child's timing events, one sample per timed call.
  TimingStats wall;       // The same calls, start to end as anvil measured them (run/call_clock.h).
  double untimed_ms = 0;  // Median per call of wall - event: what the events did not see.
  // Median per call of the time the child's timing thread and anvil's clock
  // thread waited for a CPU (schedstat); unset when /proc did not say.
  std::optional<double> queued_ms;
  double floor_ms = 0;  // verify/roofline.h: the least time the outputs take to write; 0 when unknown.
  // Distinct input sets of the timed calls that no trial used (0: they
  // rotated through the trials' sets, or one set of a streamed task).
  int timing_sets = 0;
  // Where the timed calls' input sets were before their call: "preloaded"
  // (in the candidate's process from before the warmup) or
  // "written_after_ready" (the task server wrote each call's set after the
  // worker's ready: docs/protocol.md, "timed sets"); "" when not timed.
  std::string timed_inputs;
  // The input sets (of the timing sets, or of the trials' sets they rotated
  // through) whose last timed output was compared again: a random sample
  // drawn after the last call (run/call_clock.h, RecheckSample).
  std::vector<int> rechecked;
  // The kernel trace of the candidate's process (CUDA): integrity/kernel_trace.h.
  TraceEvidence trace;
  std::optional<TimingStats> eager, compile;
  std::string eager_error, compile_error;
  // The graphs dynamo compiled for the compile baseline (tasks/prepare.h);
  // -1: not measured or not said.
  int compile_graphs = -1;
  double speedup_eager = 0;  // eager median / candidate median; 0 when unknown.
  double speedup_compile = 0;
};

struct Verdict {
  VerdictStatus status = VerdictStatus::kInfraError;
  std::string task;  // Task name.
  std::string task_path;
  int level = 0;
  std::string candidate;  // Candidate path.
  std::string format;     // "kernelbench" | "native"
  std::string backend;
  bool device_present = true;
  std::string torch_version;
  std::string anvil_version;
  std::string started_at;  // ISO 8601 UTC.
  Policy policy;           // The rules it was judged under.
  // The task is degenerate (no check of its outputs tells a kernel from a
  // trivial output; docs/rules.md): which output and form, "out0: zeros".
  std::string task_degenerate;
  // The quotas in force for the candidate's processes (core/cgroup.h), by
  // name: "run_memory_bytes", "run_pids", ...; empty: none.
  std::map<std::string, double> quotas;
  // An infra_error that recurred, alone on the machine, with this candidate
  // only (its health probe passed between tries): judged runtime_error.
  bool suspect_candidate = false;
  // How many times the evaluator tried again after an infra_error (0: none),
  // and the first line of each error that made it try again, in order.
  int infra_retries = 0;
  std::vector<std::string> infra_retry_causes;
  // Not in the JSON: the infra_error came while the candidate's code was
  // imported, built or run, so it may be the candidate's doing and is tried
  // again (Evaluator::Evaluate). One before that (a disk below its floor, a
  // task that cannot be prepared) fails alike whatever the candidate.
  bool infra_while_candidate = false;
  // Not in the JSON: the infra_error is a device that ran out of memory while
  // other processes held some of it (run/device_memory.h): tried again once
  // the device is idle, never counted as the candidate's.
  bool device_busy = false;
  double seconds = 0;
  // Wall seconds by stage ("prepare", "extract", "compile", "static_check",
  // "make_trials", "run", "compare", "perf", "trace", "baselines"), summed
  // over calls.
  std::map<std::string, double> stage_seconds;
  // Of those, the time spent waiting for the device while other evaluations
  // side by side held it (pipeline/device_gate.h): contention, not work.
  double device_wait_seconds = 0;
  // Seconds it waited, in a batch, for a compile slot (`--compile-jobs`)
  // before its extraction and compile: the queue, not work.
  double compile_wait_seconds = 0;
  // Of stage_seconds, the time the task server's work for it waited while the
  // server ran other task code (another verdict's trials, preparation or
  // torch.compile's compile of its baseline: Python's one call of task code
  // at a time): other verdicts' time, not this one's.
  double server_wait_seconds = 0;
  // The device's work this evaluation ran, by who ran it: "prepare" (the
  // task prepared now), "server" (the task server's trials, references and
  // comparisons), "candidate" (its process: the kernel trace's busy time,
  // untraced timed calls at the traced median; without a trace its trials'
  // and timed calls' time), "baselines" (measured now). docs/verdict.md.
  std::map<std::string, double> work_seconds;
  // torch.compile's own compile for the compile baseline, measured now.
  double baseline_compile_seconds = 0;
  // The baselines measured now, by the task server's phases and anvil's own
  // side (docs/verdict.md); empty otherwise.
  std::map<std::string, double> baseline_phase_seconds;
  CompileResult compile;
  RunGate run;
  CorrectGate correct;
  LegalGate legal;
  PerfGate perf;
  double correctness_rate = 0;  // q = passed trials / trials.
  // MusaCoder eq. 2 (verify/reward.h); none for infra_error: a trainer must
  // not learn from the machine's failures (docs/verdict.md).
  std::optional<double> reward = -1.0;
  std::string feedback;
  std::string error;  // infra_error: what went wrong in anvil or the environment.
};

// The verdict as JSON text (`indent` < 0: one line).
std::string VerdictToJson(const Verdict& verdict, int indent);

}  // namespace anvil
