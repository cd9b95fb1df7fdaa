// A verdict policy: the named set of rules that decides what is correct and
// legal (docs/rules.md, "Policies"). A verdict records the policy it was
// judged under, with every setting that replaced one of the policy's own
// ("overrides": a task sidecar's tolerance, --atol, --rtol). The policy is
// part of every key a verdict depends on (the --out resume key, the prepared
// task's, the verdict cache's). Only correctness and legality differ between
// policies: anvil's sandbox, timing and its other integrity rules are the
// same under all of them. Plain value.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/status.h"

namespace anvil {

struct Policy {
  std::string name = "musacoder";
  int version = 1;
  // Default tolerances (atol = rtol) by floating dtype; integers are exact.
  double float32_tol = 1e-4;
  double float64_tol = 1e-6;
  double half_tol = 1e-2;  // float16 and bfloat16.
  // NaN in the candidate's output matches a NaN of the reference (false:
  // NaN always fails, as torch.allclose's default equal_nan=False).
  bool nan_equal = true;
  // The reference runs with torch's default TF32 settings (cuDNN
  // convolutions in TF32) rather than in exact fp32.
  bool reference_tf32 = false;
  // Torch compute in ModelNew.forward and in the extension, vendor libraries
  // and their kernels are allowed: those rules are evidence, not cheats.
  bool torch_compute_allowed = false;
  // KernelBench's static checker (its strict checks and backend check) runs:
  // its rules (kb.*) are cheats.
  bool kernelbench_static = false;
  // The trivial-output guard (docs/rules.md): a task whose check a trivial
  // output (zeros, a constant, an input, one row) would pass is checked
  // tighter, or marked degenerate.
  bool trivial_guard = true;
  // What the run replaced of the policy's own settings, by name: "atol",
  // "rtol", "sidecar.float32.atol", ...
  std::map<std::string, double> overrides;

  // "musacoder/1": what a key holds of it (overrides enter keys as options).
  std::string Id() const { return name + "/" + std::to_string(version); }
  // Whether `rule`, a cheat in anvil's own rules, is only evidence here.
  bool Allows(const std::string& rule) const;
};

// The policy called `name` (musacoder, kernelbench, kernelbench-v0.1); an
// error that lists them otherwise.
Result<Policy> PolicyNamed(const std::string& name);
std::vector<std::string> PolicyNames();

}  // namespace anvil
