// Gates 1-2 of the evaluator, the comparison: the candidate's outputs against
// the reference's, trial by trial (several at once), held-out sets and the
// re-checked timed calls included (those of large outputs on the elements
// anvil drew), then the gate's totals.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <thread>

#include "pipeline/evaluator.h"  // Evaluator's comparison methods are defined here.
#include "run/call_clock.h"
#include "verify/compare.h"
#include "verify/tensor_dir.h"

namespace anvil {
namespace fs = std::filesystem;
namespace {

// Comparisons side by side: they are bound by memory bandwidth, not cores.
constexpr std::size_t kCompareThreads = 4;

// The reference's elements at `points` (flat indices into `we`) against the
// candidate's drawn values; a mismatch is located in the whole output.
CompareResult CompareDrawn(const TensorEntry& we, const void* want, const std::vector<int64_t>& points,
                           const TensorView& got, Tolerance tol) {
  const std::size_t size = DTypeSize(we.dtype);
  std::string drawn(points.size() * size, '\0');
  const auto* all = static_cast<const char*>(want);
  for (std::size_t j = 0; j < points.size(); ++j) {
    std::memcpy(drawn.data() + j * size, all + static_cast<std::size_t>(points[j]) * size, size);
  }
  CompareResult r = CompareTensors(TensorView{we.dtype, got.shape, drawn.data()}, got, tol);
  if (!r.ok && r.first_mismatch >= 0) {
    r.first_mismatch = points[static_cast<std::size_t>(r.first_mismatch)];
    r.first_mismatch_index.assign(we.shape.size(), 0);
    int64_t rest = r.first_mismatch;
    for (std::size_t d = we.shape.size(); d-- > 0;) {
      const int64_t dim = we.shape[d];
      r.first_mismatch_index[d] = dim > 0 ? rest % dim : 0;
      rest = dim > 0 ? rest / dim : 0;
    }
  }
  return r;
}

}  // namespace

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

TrialCheck Evaluator::CompareTrial(const Task& task, const PreparedTask& prepared, const fs::path& want_dir,
                                   const fs::path& got_dir, int trial, Verdict& v,
                                   std::optional<uint64_t> recheck_seed) {
  TrialCheck t;
  t.trial = trial;
  auto want = ReadTensorManifest(want_dir);
  auto got = ReadTensorManifest(got_dir);
  if (!want.ok()) {
    v.error = "reading the reference outputs: " + want.message();
    t.problem = "reference unreadable";
    return t;
  }
  if (!got.ok()) {
    t.problem = "missing";
    return t;
  }
  if (got.value().size() != want.value().size()) {
    t.problem = "output count";
    return t;
  }
  t.ok = true;
  for (std::size_t i = 0; i < want.value().size(); ++i) {
    const TensorEntry& we = want.value()[i];
    const TensorEntry& ge = got.value()[i];
    OutputCheck o;
    o.name = we.name;
    o.dtype = std::string(DTypeName(we.dtype));
    o.tolerance = TrialTolerance(task, we.dtype, options_);
    if (auto scale = prepared.atol_scale.find(we.name); scale != prepared.atol_scale.end()) {
      o.tolerance.atol *= scale->second;
    }
    // A recheck of a large output holds only the elements the seed drew.
    const std::vector<int64_t> points =
        recheck_seed && !we.is_scalar ? RecheckPoints(NumElements(we.shape), *recheck_seed, trial, static_cast<int>(i))
                                      : std::vector<int64_t>();
    const std::vector<int64_t> want_shape = points.empty() ? we.shape : std::vector<int64_t>{kRecheckPoints};
    if (ge.is_scalar || ge.shape != want_shape || ge.dtype != we.dtype) {
      // Decided from the manifest alone: never read a mis-shaped output.
      o.result.ok = false;
      o.result.problem = ge.is_scalar ? "not a tensor" : (ge.shape != want_shape ? "shape" : "dtype");
    } else {
      // The reference's file is ours and mapped; the candidate's is copied in,
      // so nothing it left running can truncate it under a mapping (SIGBUS).
      auto wb = MapTensorBytes(want_dir, we);
      auto gb = ReadTensorBytes(got_dir, ge);
      if (!wb.ok() || !gb.ok()) {
        o.result.ok = false;
        o.result.problem = "unreadable";
      } else if (points.empty()) {
        o.result = CompareTensors(TensorView{we.dtype, we.shape, wb.value().data()},
                                  TensorView{ge.dtype, ge.shape, gb.value().data()}, o.tolerance);
      } else {
        o.result =
            CompareDrawn(we, wb.value().data(), points, TensorView{ge.dtype, ge.shape, gb.value().data()}, o.tolerance);
      }
    }
    if (!o.result.ok && t.ok) {
      t.ok = false;
      t.problem = o.result.problem;
    }
    t.outputs.push_back(std::move(o));
  }
  return t;
}

std::vector<TrialCheck> Evaluator::CompareTrials(const Task& task, const PreparedTask& prepared,
                                                 const std::vector<CompareJob>& jobs, Verdict& v) {
  std::vector<TrialCheck> checks(jobs.size());
  std::vector<Verdict> errors(jobs.size());  // CompareTrial reports anvil's own failures in Verdict::error.
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t i = next++; i < jobs.size(); i = next++) {
      checks[i] = CompareTrial(task, prepared, jobs[i].want_dir, jobs[i].got_dir, jobs[i].trial, errors[i],
                               jobs[i].recheck_seed);
    }
  };
  const std::size_t threads = std::min<std::size_t>(jobs.size(), kCompareThreads);
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  for (const Verdict& e : errors) {
    if (!e.error.empty() && v.error.empty()) v.error = e.error;
  }
  return checks;
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
