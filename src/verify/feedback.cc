#include "verify/feedback.h"

#include <cstdio>

#include "core/python.h"

namespace anvil {
namespace {

std::string Num(double v) {
  char buf[32];
  snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

std::string Index(const std::vector<int64_t>& idx) {
  std::string s = "[";
  for (std::size_t i = 0; i < idx.size(); ++i) s += (i ? ", " : "") + std::to_string(idx[i]);
  return s + "]";
}

}  // namespace

std::string MismatchText(const TrialCheck& t) {
  if (t.problem == "output count") return "returned a different number of outputs than the reference.";
  for (const auto& o : t.outputs) {
    const CompareResult& r = o.result;
    if (r.ok) continue;
    if (r.problem == "shape" || r.problem == "dtype") return "output " + o.name + " has the wrong " + r.problem + ".";
    std::string text = "output " + o.name + " differs in " + std::to_string(r.mismatches) + " of " +
                       std::to_string(r.elements) + " elements (max abs error " + Num(r.max_abs_error) +
                       ", max rel error " + Num(r.max_rel_error) + "; tolerance atol=" + Num(o.tolerance.atol) +
                       " rtol=" + Num(o.tolerance.rtol) + ").";
    if (r.first_mismatch >= 0) {
      text += " First mismatch at index " + Index(r.first_mismatch_index) + ": expected " + Num(r.expected_at_first) +
              ", got " + Num(r.actual_at_first) + ".";
    }
    if (r.nonfinite_mismatches > 0) {
      text += " " + std::to_string(r.nonfinite_mismatches) +
              " elements are NaN/Inf where the reference is finite (outputs start as NaN: was every element "
              "written?).";
    }
    return text;
  }
  return t.problem.empty() ? "it did not match." : t.problem + ".";
}

namespace {

std::string WrongAnswerText(const Verdict& v) {
  const CorrectGate& c = v.correct;
  std::string text = "Wrong answer: " + std::to_string(c.passed) + " of " + std::to_string(c.trials) +
                     " trials match the reference.\n";
  std::vector<std::pair<std::string, const TrialCheck*>> failed;
  for (const auto& t : c.details) failed.emplace_back("Trial " + std::to_string(t.trial), &t);
  if (c.passed == c.trials) {
    // Right on the benchmark's inputs: the held-out ones decided it (catalog
    // C1), or the sets the trivial-output guard added ("guard=...").
    bool guard_failed = false;
    for (std::size_t k = 0; k < c.held_out.size() && k < c.held_out_sets.size(); ++k) {
      guard_failed = guard_failed || (!c.held_out[k].ok && c.held_out_sets[k].starts_with("guard="));
    }
    text = guard_failed
               ? "Wrong answer: every trial matches, but on the benchmark's inputs this task's tolerance also "
                 "accepts outputs that compute nothing (zeros, a constant, an input, one row repeated), so the "
                 "output must also be right on inputs of another scale or sign: it is not.\n"
               : "Wrong answer: every trial matches, but not the held-out input sets the task declares (shapes the "
                 "benchmark does not show): the kernel must not depend on the benchmark's exact sizes.\n";
    for (std::size_t k = 0; k < c.held_out.size(); ++k) {
      failed.emplace_back("Held-out set " + std::to_string(k) +
                              (k < c.held_out_sets.size() ? " (" + c.held_out_sets[k] + ")" : std::string()),
                          &c.held_out[k]);
    }
  }
  for (const auto& [label, trial] : failed) {
    if (trial->ok) continue;
    text += label + ": " + MismatchText(*trial) + "\n";
    return text;
  }
  return text;
}

// What to do instead, by the kind of the rules that fired: computing with
// torch or a library, or working around the harness (its timer, its files,
// work finished outside the call).
std::string CheatAdvice(const std::vector<RuleHit>& hits) {
  static constexpr const char* kCompute[] = {"compute", "vendor",     "library",       "fallback",         "torch",
                                             "aten",    "python_api", "no_own_kernel", "unused_extension", "lazy"};
  for (const auto& h : hits) {
    if (h.severity != "cheat") continue;
    for (const char* word : kCompute) {
      if (h.rule.find(word) != std::string::npos) {
        return "Compute the result in your own kernel; torch/library calls may only allocate or reshape.\n";
      }
    }
  }
  return "Do the whole computation inside each forward call, in your own kernel, and leave the harness (its "
         "timer, its processes, its files) alone.\n";
}

}  // namespace

std::string MakeFeedback(const Verdict& v) {
  switch (v.status) {
    case VerdictStatus::kCompileError:
      if (v.compile.compiler == "python") return "The candidate is not valid Python:\n" + v.compile.summary;
      return "Compilation failed (" + v.compile.compiler + "). Fix these errors:\n" + v.compile.summary;
    case VerdictStatus::kRuntimeError: {
      if (v.run.stage == "memory_quota") {
        // The kernel's own count said so (run/candidate_run.cc), not a guess from the signal.
        return "Runtime error: " + v.run.message +
               ". Use less memory: allocate once, reuse buffers, and do not hold more than the inputs and outputs "
               "need.\n";
      }
      if (v.run.stage == "device_memory_quota") {
        // The driver's count, read by anvil (run/device_memory.h).
        return "Runtime error: " + v.run.message +
               ". Use less device memory: allocate workspaces once and reuse them, free temporaries, and do not "
               "hold more than the inputs, outputs and a working set need.\n";
      }
      std::string where = v.run.stage.empty() ? "" : " during " + v.run.stage;
      std::string text = "Runtime error" + where;
      if (v.run.term_signal != 0) {
        text += ": the process was killed by signal " + std::to_string(v.run.term_signal) +
                " (a crash: invalid memory access, abort, ...)";
      } else if (!v.run.message.empty()) {
        text += ": " + v.run.message;
      } else {
        text += ": the process exited with code " + std::to_string(v.run.exit_code);
      }
      text += ".\n";
      std::string tail = TailLines(v.run.traceback.empty() ? v.run.stderr_tail : v.run.traceback, 12);
      if (!tail.empty()) text += tail + "\n";
      return text;
    }
    case VerdictStatus::kTimeout:
      return "Timeout: the candidate did not finish within " + Num(v.run.deadline_seconds) +
             " s and was killed. Look for infinite loops, deadlocks, or far too much work per call.\n";
    case VerdictStatus::kWrongAnswer:
      return WrongAnswerText(v);
    case VerdictStatus::kCheat: {
      std::string text = "Rejected as not a genuine kernel implementation:\n";
      for (const auto& h : v.legal.hits) {
        if (h.severity != "cheat") continue;
        text += "- [" + h.rule + "] " + h.message;
        if (h.line > 0) text += " (" + h.source + " line " + std::to_string(h.line) + ": " + h.excerpt + ")";
        text += "\n";
      }
      return text + CheatAdvice(v.legal.hits);
    }
    case VerdictStatus::kPass: {
      std::string text =
          "Correct on " + std::to_string(v.correct.passed) + "/" + std::to_string(v.correct.trials) + " trials.";
      if (v.perf.ran) {
        text += " Median time " + Num(v.perf.candidate.median_ms) + " ms";
        if (v.perf.speedup_eager > 0) text += "; speedup " + Num(v.perf.speedup_eager) + "x vs eager";
        if (v.perf.speedup_compile > 0) text += ", " + Num(v.perf.speedup_compile) + "x vs torch.compile";
        text += ".";
      }
      return text + "\n";
    }
    case VerdictStatus::kInfraError:
      return "The verifier could not finish (not the candidate's fault): " + v.error + "\n";
  }
  return "";
}

}  // namespace anvil
