// Runtime evidence from the kernel trace: every kernel, memcpy and memset the
// candidate's process ran on any stream (recorded through CUPTI by
// libanvil_trace.so, integrity/kernel_tracer.cc), with the windows the worker
// marked — each trial's forward (trial_K), each warmup call (warm_K) and
// timed call (call_K). Judged here, in anvil, never in the candidate's
// process. Pure functions plus a file reader; thread-safe.
//
// Rules (docs/rules.md, "Runtime"), all of severity cheat:
//   trace.no_own_kernel   a trial or timed call ran none of the candidate's own
//                         kernels (the __global__ functions its build defines)
//   trace.vendor_kernel   a cuBLAS/cuDNN/CUTLASS/cuFFT kernel the candidate's
//                         build does not define ran in a call
//   trace.foreign_time    in the median timed call, kernels that are neither
//                         the candidate's nor plumbing (fill, copy, memset,
//                         memcpy) took more GPU time than the candidate's own
//   trace.outside_call    one of the candidate's kernels (or a vendor kernel)
//                         started outside every call: launched by a thread
//                         between calls, or left to run after one
//   trace.event_mismatch  in most timed calls the kernels were busy for much
//                         longer than the call's CUDA events measured
//   trace.untraced_time   the calls the trace watched were busy for much
//                         longer (median) than the unwatched calls — whose
//                         times count — reported: forged times, or a
//                         candidate that behaves differently when watched
//   trace.l2_persist      a kernel ran with a persisting-L2 access policy
//                         window, or the process set aside persisting L2 or
//                         gave a stream or launch such a window (any API call,
//                         whatever the source spelled)
#pragma once

#include <cstdint>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "core/status.h"
#include "integrity/rule_hit.h"

namespace anvil {

struct TraceRecord {
  enum class Kind { kKernel, kMemcpy, kMemset };
  Kind kind = Kind::kKernel;
  uint64_t start = 0;  // ns, CUPTI's clock.
  uint64_t end = 0;
  uint32_t stream = 0;
  bool persisting = false;  // Launched with a persisting-L2 access policy window.
  uint64_t bytes = 0;
  std::string name;  // Mangled, as the module holds it; "memcpy" / "memset".
};

struct TraceWindow {
  std::string label;  // trial_K, warm_K, call_K
  uint64_t begin = 0;
  uint64_t end = 0;
};

struct KernelTrace {
  std::vector<TraceRecord> records;
  std::vector<TraceWindow> windows;
  uint64_t dropped = 0;
  std::string error;  // The recorder could not start or write (an `E` line).
  // Calls that set aside persisting L2 or gave a stream, graph node or launch
  // a persisting access policy window (`P` lines: "what", CUPTI's callbacks).
  std::vector<std::string> l2_calls;
  std::string note;  // What the recorder could not watch (an `N` line).
};

// The recorder's file; Error when it cannot be read or a line is malformed.
Result<KernelTrace> ReadKernelTrace(const std::filesystem::path& file);
Result<KernelTrace> ParseKernelTrace(const std::string& text);

// The kernels the candidate's build defines, from the functions its artifacts
// define (DefinedFunctions, integrity/symbol_scan.h). A kernel matches by its
// mangled name, or — for kernels of internal linkage, which the device code
// names with a module prefix — by its demangled name's last components.
class OwnKernels {
 public:
  OwnKernels() = default;
  explicit OwnKernels(const std::vector<std::string>& defined_functions);
  bool empty() const { return exact_.empty(); }
  bool Contains(const std::string& kernel_name) const;

 private:
  std::set<std::string> exact_;
  std::set<std::string> demangled_;  // Without namespaces of internal linkage.
};

// What a kernel is: the candidate's own, plumbing (fills, copies, memcpy,
// memset), a vendor library's (cuBLAS, cuDNN, CUTLASS, cuFFT, ...) or other
// (torch's compute kernels, anything else).
enum class KernelOrigin { kOwn, kPlumbing, kVendor, kOther };
KernelOrigin ClassifyKernel(const TraceRecord& r, const OwnKernels& own);

// One kernel name's share of the trace, for the verdict.
struct TraceKernelSummary {
  std::string name;    // Demangled, shortened.
  std::string origin;  // own | plumbing | vendor | other
  int launches = 0;
  double total_ms = 0;
};

// What the verdict records (perf.trace).
struct TraceEvidence {
  bool ran = false;
  std::string error;  // Why there is no trace (or why it was not judged).
  int windows = 0;
  int kernels = 0;  // Kernel launches inside windows.
  uint64_t dropped = 0;
  double own_share = -1;  // Median timed call: own kernel time / own + foreign non-plumbing time.
  double busy_ms = 0;     // Median timed call: time some kernel or copy was running.
  // The whole process: time some kernel or copy ran, plus each timed call the
  // trace did not watch counted at busy_ms (the verdict's work_seconds).
  double work_ms = 0;
  std::vector<TraceKernelSummary> top;  // By total time inside windows, at most 12.
};

// Judges `trace` against the candidate's own kernel names and the timed calls'
// event times (ms, call order). Fills `evidence`; returns the cheat hits.
std::vector<RuleHit> JudgeKernelTrace(const KernelTrace& trace, const OwnKernels& own,
                                      const std::vector<double>& event_ms, TraceEvidence& evidence);

}  // namespace anvil
