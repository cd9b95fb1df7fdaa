#include "pipeline/runtime_outcome.h"

#include <cstdio>
#include <utility>

#include "core/sandbox.h"
#include "integrity/candidate_sandbox.h"
#include "integrity/static_legal.h"

namespace anvil {

void FromRun(const RunOutcome& r, RunGate& g) {
  g.ok = r.ok;
  g.seconds += r.seconds;
  g.ready_seconds += r.ready_seconds;
  g.timed_out = r.timed_out;
  g.exit_code = r.exit_code;
  g.term_signal = r.term_signal;
  g.stage = r.stage;
  g.message = r.message;
  g.traceback = r.traceback;
  g.stderr_tail = r.stderr_tail;
  g.sandbox = SandboxLayerNames(r.sandbox_layers);
  g.aten_compute.insert(g.aten_compute.end(), r.aten_compute.begin(), r.aten_compute.end());
  g.host_compute.insert(g.host_compute.end(), r.host_compute.begin(), r.host_compute.end());
  if (!r.compute_seen_in.empty()) g.compute_seen_in = r.compute_seen_in;
  if (!r.tampered.empty()) g.tampered = r.tampered;
  g.forged.insert(g.forged.end(), r.forged.begin(), r.forged.end());
  g.after_return.insert(g.after_return.end(), r.after_return.begin(), r.after_return.end());
  for (const auto& [phase, seconds] : r.phase_seconds) g.phase_seconds[phase] = seconds;
}

void QuotasFrom(const RunOutcome& r, Verdict& v) {
  if (r.quota.memory_bytes > 0) v.quotas["run_memory_bytes"] = static_cast<double>(r.quota.memory_bytes);
  if (r.quota.pids > 0) v.quotas["run_pids"] = r.quota.pids;
  if (r.quota.cpu_seconds > 0) v.quotas["run_cpu_seconds"] = static_cast<double>(r.quota.cpu_seconds);
  if (r.quota.device_memory_bytes > 0) {
    v.quotas["run_device_memory_bytes"] = static_cast<double>(r.quota.device_memory_bytes);
  }
}

bool RuntimeCheat(Verdict& v, RuleHit hit, const char* skipped) {
  v.legal.ran = true;
  if (AllowByPolicy(v.policy, hit)) {
    v.legal.hits.push_back(std::move(hit));
    return false;
  }
  v.legal.ok = false;
  v.legal.hits.push_back(std::move(hit));
  v.perf.skipped = skipped;
  v.status = VerdictStatus::kCheat;
  return true;
}

// What the static check could not see (an alias, a computed name, a loop
// over a module) the worker's fingerprints did (catalog D3, D6).
void TamperCheat(Verdict& v) {
  const auto& t = v.run.tampered;
  std::string names;
  for (std::size_t i = 0; i + 1 < t.size() && i < 6; ++i) names += (i ? ", " : "") + t[i];
  if (t.size() > 7) names += " and " + std::to_string(t.size() - 7) + " more";
  RuntimeCheat(v, "run.tamper",
               "the candidate's code replaced what anvil's worker times, copies or reports with: " +
                   (names.empty() ? t.back() : names + " (found " + t.back() + ")"),
               "the candidate tampered with the harness");
}

bool WorkerFindingsCheat(Verdict& v) {
  if (!v.run.tampered.empty()) {
    TamperCheat(v);
    return true;
  }
  if (!v.run.forged.empty()) {
    std::string files;
    for (std::size_t i = 0; i < v.run.forged.size() && i < 5; ++i) files += (i ? "; " : "") + v.run.forged[i];
    RuntimeCheat(v, "run.forged_output",
                 "files of the worker's folder changed after the worker wrote and sealed them, or it never wrote "
                 "them: " +
                     files,
                 "the candidate rewrote the worker's outputs or reports");
    return true;
  }
  if (!v.run.after_return.empty()) {
    RuntimeCheat(v, "run.after_return", v.run.after_return.front(), "the timed calls' outputs were finished late");
    return true;
  }
  return ForwardTraceCheat(v);
}

bool ForwardTraceCheat(Verdict& v) {
  struct Finding {
    const std::vector<std::string>& seen;
    const char* rule;
    const char* what;
    const char* skipped;
  };
  // What the static check could not see (computed names, C++ calls into ATen)
  // still passes the dispatcher; numpy and Python loops compute outside it,
  // but need the tensor's data on the host first (catalog A1, A3, A4).
  const Finding findings[] = {
      {v.run.aten_compute, "run.aten_compute",
       "ModelNew.forward dispatched torch compute outside the plumbing allowlist (paper Appendix J)",
       "torch computed the result"},
      {v.run.host_compute, "run.host_compute",
       "ModelNew.forward handed tensor data to Python or numpy, which computed instead of a kernel",
       "the host computed the result"},
  };
  for (const Finding& f : findings) {
    if (f.seen.empty()) continue;
    std::string message = f.what;
    if (!v.run.compute_seen_in.empty()) message += " (first in " + v.run.compute_seen_in + ")";
    message += ": ";
    for (std::size_t i = 0; i < f.seen.size(); ++i) message += (i ? ", " : "") + f.seen[i];
    if (RuntimeCheat(v, f.rule, std::move(message), f.skipped)) return true;
  }
  return false;
}

bool RuntimeCheat(Verdict& v, std::string rule, std::string message, const char* skipped) {
  RuleHit hit;
  hit.rule = std::move(rule);
  hit.severity = "cheat";
  hit.source = "runtime";
  hit.message = std::move(message);
  return RuntimeCheat(v, std::move(hit), skipped);
}

void SandboxViolation(Verdict& v, const std::string& when) {
  RuntimeCheat(v, SandboxViolationHit(when), "the sandbox stopped the candidate");
}

VerdictStatus RunFailureStatus(const RunGate& g) {
  return g.timed_out ? VerdictStatus::kTimeout : VerdictStatus::kRuntimeError;
}

namespace {

std::string DiskFullMessage(const std::filesystem::path& folder, std::uintmax_t free, const std::string& what) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f MiB", static_cast<double>(free) / (1 << 20));
  return "the disk holding " + folder.string() + " has only " + buf + " free: " + what +
         " failed for want of room, not by the candidate's fault. Free some space (anvil cache prune --max-size "
         "SIZE) or put the temporary folders (TMPDIR) and --cache-dir on a larger disk";
}

}  // namespace

std::optional<std::string> DiskFullProblem(const std::filesystem::path& work, std::uintmax_t free,
                                           std::uintmax_t work_bytes, std::uintmax_t task_bytes) {
  if (free >= kDiskLowBytes || work_bytes > task_bytes + kDiskLowBytes) return std::nullopt;
  return DiskFullMessage(work.parent_path(), free, "the candidate's run (writing its outputs)");
}

}  // namespace anvil
