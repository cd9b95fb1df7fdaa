// Benchmark metrics over many candidates: the MusaCoder paper's Pass@k
// (unbiased estimator), Avg@N and Faster Rate, geometric-mean speedups, and
// KernelBench's own fast_p, per level and over the whole run
// (docs/kernelbench.md defines each one). Pure functions over plain values;
// thread-safe.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace anvil {

// One verdict, reduced to what the metrics need.
struct SampleRecord {
  // The problem's identity: a run database's task (level, name, sha256);
  // "" for a KernelBench folder, whose problems are (level, problem).
  std::string task;
  int level = 0;
  int problem = 0;
  int sample = 0;
  std::string status;           // A verdict status name; only "pass" counts as correct.
  double correctness_rate = 0;  // q in [0, 1].
  double speedup_eager = 0;     // Eager median / candidate median; 0 = unknown.
  double speedup_compile = 0;   // torch.compile median / candidate median; 0 = unknown.
  bool degenerate = false;      // The verdict says its task is degenerate (task_degenerate).
};

// Whether a sample's status is the machine's failure, not the model's:
// "infra_error" (a verdict) and "server_error" (the model loop's outcome).
// Such samples leave n: a problem's Pass@k is over its other samples.
bool MachineFailure(const std::string& status);

struct MetricsOptions {
  double faster_than = 1.1;                                     // Faster Rate counts speedup > this.
  std::vector<double> fast_p = {0.0, 0.5, 0.8, 1.0, 1.5, 2.0};  // KernelBench's thresholds.
};

// Geometric mean of the known speedups of passing samples.
struct SpeedupMean {
  int samples = 0;     // Passing samples with a known speedup.
  double geomean = 0;  // 0 when samples == 0.
};

struct FastP {
  double p = 0;
  double fraction = 0;  // Of problems, in [0, 1].
};

// Metrics of one level (or of the whole run). Percentages are in [0, 100].
struct LevelMetrics {
  int level = 0;                // Tasks without a level are level 0.
  bool whole_run = false;       // The whole run's row (every level), not one level's.
  int problems = 0;             // With at least one sample (Q).
  int samples = 0;              // All samples.
  int unjudged = 0;             // Samples that are a MachineFailure: left out of n and of the rates.
  int passed = 0;               // Samples whose status is "pass".
  int samples_min = 0;          // Fewest samples of one problem.
  int samples_max = 0;          // Most samples of one problem: the N of Pass@N and Avg@N.
  double pass_at_1 = 0;         // Percent; unbiased estimator, averaged over problems.
  double pass_at_n = 0;         // Percent; k = N, clamped to a problem's own sample count.
  double avg_at_n = 0;          // Percent of all samples that passed.
  double mean_correctness = 0;  // Mean q over all samples, in [0, 1].
  double faster_eager = 0;      // Percent of all samples that passed with speedup > faster_than.
  double faster_compile = 0;
  SpeedupMean speedup_eager, speedup_compile;
  std::vector<FastP> fast_p;  // One per MetricsOptions::fast_p, same order.
  int sample0_missing = 0;    // Problems without a sample 0: failures for fast_p.
  int speedup_unknown = 0;    // Passing samples without an eager speedup (perf off or failed).
  std::map<std::string, int> by_status;
  // Problems left with n = 0 (every sample a MachineFailure): "level 1
  // problem 19", or the record's task. Pass@k and fast_p count them as failing.
  std::vector<std::string> unjudged_problems;

  // Problems with a sample that is not a MachineFailure (P of Q).
  int problems_judged() const { return problems - static_cast<int>(unjudged_problems.size()); }
};

struct RunMetrics {
  MetricsOptions options;
  std::vector<LevelMetrics> levels;  // By level, ascending.
  LevelMetrics overall;              // Every record (whole_run).
};

// The problems any of `records` says are degenerate ("level 2 problem 83", or
// the record's task), and the records of the other problems.
std::vector<std::string> DegenerateProblems(const std::vector<SampleRecord>& records);
std::vector<SampleRecord> WithoutDegenerate(const std::vector<SampleRecord>& records);

// Unbiased pass@k of one problem with n samples, c of them correct:
// 1 - C(n-c, k) / C(n, k), computed as 1 - prod_{i=n-c+1..n} (1 - k/i); 1 when
// n - c < k. Needs 0 <= c <= n and 1 <= k <= n (aborts otherwise).
double PassAtK(int n, int c, int k);

// Every metric per level and overall. A (problem, sample) given twice counts
// once: the later record wins. No records give empty metrics. A problem's n
// is its samples that are not a MachineFailure, k = min(N, n); one left with
// n = 0 counts as failing in Pass@k and fast_p. Avg@N, Faster Rate and mean q
// are over the samples that are not a MachineFailure.
RunMetrics ComputeMetrics(const std::vector<SampleRecord>& records, const MetricsOptions& options);

}  // namespace anvil
