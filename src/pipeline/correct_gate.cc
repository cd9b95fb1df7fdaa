// Gate 2's tolerances and totals. The comparison itself is the task
// server's (python/anvil_py/task_server.py; pipeline/server_trials.h reads
// what it found).
#include "pipeline/evaluator.h"  // Evaluator::FinishCorrectness is defined here.
#include "verify/compare.h"

namespace anvil {

// The policy's, then the task sidecar's, then --atol/--rtol (Verdict::policy
// records the last two as overrides).
Tolerance TrialTolerance(const Task& task, DType dtype, const EvalOptions& options) {
  Tolerance tol = DefaultTolerance(dtype, options.policy);
  for (const auto& o : task.tolerances) {
    if (o.dtype == DTypeName(dtype)) {
      tol.atol = o.atol;
      tol.rtol = o.rtol;
    }
  }
  if (options.atol) tol.atol = *options.atol;
  if (options.rtol) tol.rtol = *options.rtol;
  return tol;
}

void Evaluator::FinishCorrectness(Verdict& v) {
  CorrectGate& c = v.correct;
  c.passed = 0;
  for (const auto& t : c.details) c.passed += t.ok ? 1 : 0;
  c.ok = c.trials > 0 && c.passed == c.trials;
  // Held-out sets are correctness trials too (catalog C1): they count in q.
  int held_passed = 0;
  for (const auto& t : c.held_out) held_passed += t.ok ? 1 : 0;
  c.ok = c.ok && held_passed == static_cast<int>(c.held_out.size());
  const int all = c.trials + static_cast<int>(c.held_out.size());
  v.correctness_rate = all > 0 && c.trials > 0 ? static_cast<double>(c.passed + held_passed) / all : 0;
  if (!v.error.empty() && v.status != VerdictStatus::kInfraError) v.status = VerdictStatus::kInfraError;
}

}  // namespace anvil
