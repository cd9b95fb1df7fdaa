#include "verify/policy.h"

#include <algorithm>

namespace anvil {
namespace {

// Rules of anvil's that forbid torch compute and vendor libraries: what
// KernelBench allows (it leaves torch ops in ModelNew to a warning).
const char* const kTorchComputeRules[] = {
    "py.torch_compute",   "run.aten_compute",  "cpp.aten_compute",    "so.aten_compute",
    "cpp.vendor_library", "so.vendor_library", "trace.vendor_kernel", "trace.foreign_time",
};

Policy MusaCoder() { return Policy(); }

// KernelBench's eval_kernel_against_ref (the version of ../shared/kernelbench):
// atol = rtol = 1e-4 in fp32, 1e-2 in fp16/bf16, every output at its
// precision's tolerance, NaN fails, TF32 at torch's defaults, torch ops
// allowed; its static checker's strict checks are cheats.
Policy KernelBench() {
  Policy p;
  p.name = "kernelbench";
  p.float64_tol = 1e-4;
  p.nan_equal = false;
  p.reference_tf32 = true;
  p.torch_compute_allowed = true;
  p.kernelbench_static = true;
  p.trivial_guard = false;
  return p;
}

// The published leaderboard's harness (v0.1): atol = rtol = 1e-2 in fp32, no
// static checker.
Policy KernelBenchV01() {
  Policy p = KernelBench();
  p.name = "kernelbench-v0.1";
  p.float32_tol = 1e-2;
  p.float64_tol = 1e-2;
  p.kernelbench_static = false;
  return p;
}

}  // namespace

bool Policy::Allows(const std::string& rule) const {
  if (!torch_compute_allowed) return false;
  return std::find(std::begin(kTorchComputeRules), std::end(kTorchComputeRules), rule) != std::end(kTorchComputeRules);
}

std::vector<std::string> PolicyNames() { return {"musacoder", "kernelbench", "kernelbench-v0.1"}; }

Result<Policy> PolicyNamed(const std::string& name) {
  if (name == "musacoder") return MusaCoder();
  if (name == "kernelbench") return KernelBench();
  if (name == "kernelbench-v0.1") return KernelBenchV01();
  return Status::Error("unknown policy '" + name + "': expected musacoder, kernelbench or kernelbench-v0.1");
}

}  // namespace anvil
