#include "report/metrics.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <set>
#include <tuple>

namespace anvil {
namespace {

constexpr double kPercent = 100.0;

// A problem's identity: the task's when the record names it, else (level, problem).
std::string ProblemKey(const SampleRecord& r) {
  return r.task.empty() ? "level " + std::to_string(r.level) + " problem " + std::to_string(r.problem) : r.task;
}

struct SpeedupAccumulator {
  int samples = 0;
  double log_sum = 0;
  void Add(double speedup) {
    ++samples;
    log_sum += std::log(speedup);
  }
  SpeedupMean Mean() const { return {samples, samples > 0 ? std::exp(log_sum / samples) : 0.0}; }
};

double Percent(double count, double total) { return total > 0 ? kPercent * count / total : 0.0; }

// `records` without duplicates.
LevelMetrics Summarize(int level, bool whole_run, const std::vector<SampleRecord>& records,
                       const MetricsOptions& options) {
  LevelMetrics m;
  m.level = level;
  m.whole_run = whole_run;
  std::map<std::string, std::vector<const SampleRecord*>> problems;
  for (const auto& r : records) problems[ProblemKey(r)].push_back(&r);
  m.problems = static_cast<int>(problems.size());
  m.samples = static_cast<int>(records.size());
  for (const auto& [key, samples] : problems) {
    int n = static_cast<int>(samples.size());
    m.samples_min = m.samples_min == 0 ? n : std::min(m.samples_min, n);
    m.samples_max = std::max(m.samples_max, n);
  }

  SpeedupAccumulator eager, compile;
  int faster_eager = 0, faster_compile = 0;
  double q_sum = 0;
  for (const auto& r : records) {
    m.by_status[r.status]++;
    if (MachineFailure(r.status)) {
      ++m.unjudged;
      continue;
    }
    q_sum += r.correctness_rate;
    if (r.status != "pass") continue;
    ++m.passed;
    if (r.speedup_eager > 0) {
      eager.Add(r.speedup_eager);
    } else {
      ++m.speedup_unknown;
    }
    if (r.speedup_compile > 0) compile.Add(r.speedup_compile);
    if (r.speedup_eager > options.faster_than) ++faster_eager;
    if (r.speedup_compile > options.faster_than) ++faster_compile;
  }
  const int judged = m.samples - m.unjudged;
  m.avg_at_n = Percent(m.passed, judged);
  m.mean_correctness = judged > 0 ? q_sum / judged : 0.0;
  m.faster_eager = Percent(faster_eager, judged);
  m.faster_compile = Percent(faster_compile, judged);
  m.speedup_eager = eager.Mean();
  m.speedup_compile = compile.Mean();

  double pass1_sum = 0, passn_sum = 0;
  std::vector<int> fast_counts(options.fast_p.size(), 0);
  for (const auto& [key, samples] : problems) {
    const int n = static_cast<int>(std::count_if(samples.begin(), samples.end(),
                                                 [](const SampleRecord* r) { return !MachineFailure(r->status); }));
    const int c = static_cast<int>(
        std::count_if(samples.begin(), samples.end(), [](const SampleRecord* r) { return r->status == "pass"; }));
    if (n == 0) {
      m.unjudged_problems.push_back(key);  // Failing: adds 0 to every sum below.
    } else {
      pass1_sum += PassAtK(n, c, 1);
      passn_sum += PassAtK(n, c, std::min(n, m.samples_max));
    }
    // KernelBench's fast_p looks at sample 0 only; a missing one is a failure.
    auto first = std::find_if(samples.begin(), samples.end(), [](const SampleRecord* r) { return r->sample == 0; });
    if (first == samples.end()) {
      ++m.sample0_missing;
      continue;
    }
    const SampleRecord& s0 = **first;
    if (s0.status != "pass") continue;
    for (std::size_t i = 0; i < options.fast_p.size(); ++i) {
      // A correct kernel has a finite time, so it is always faster than p = 0.
      bool faster = options.fast_p[i] <= 0 || (s0.speedup_eager > 0 && s0.speedup_eager > options.fast_p[i]);
      if (faster) ++fast_counts[i];
    }
  }
  m.pass_at_1 = Percent(pass1_sum, m.problems);
  m.pass_at_n = Percent(passn_sum, m.problems);
  for (std::size_t i = 0; i < options.fast_p.size(); ++i) {
    m.fast_p.push_back({options.fast_p[i], m.problems > 0 ? static_cast<double>(fast_counts[i]) / m.problems : 0.0});
  }
  return m;
}

}  // namespace

bool MachineFailure(const std::string& status) { return status == "infra_error" || status == "server_error"; }

double PassAtK(int n, int c, int k) {
  if (c < 0 || c > n || k < 1 || k > n) std::abort();
  if (n - c < k) return 1.0;
  double none_correct = 1.0;  // C(n-c, k) / C(n, k)
  for (int i = n - c + 1; i <= n; ++i) none_correct *= 1.0 - static_cast<double>(k) / i;
  return 1.0 - none_correct;
}

std::vector<std::string> DegenerateProblems(const std::vector<SampleRecord>& records) {
  std::set<std::string> keys;
  for (const auto& r : records) {
    if (r.degenerate) keys.insert(ProblemKey(r));
  }
  return {keys.begin(), keys.end()};
}

std::vector<SampleRecord> WithoutDegenerate(const std::vector<SampleRecord>& records) {
  const std::vector<std::string> degenerate = DegenerateProblems(records);
  const std::set<std::string> keys(degenerate.begin(), degenerate.end());
  std::vector<SampleRecord> rest;
  for (const auto& r : records) {
    if (keys.count(ProblemKey(r)) == 0) rest.push_back(r);
  }
  return rest;
}

RunMetrics ComputeMetrics(const std::vector<SampleRecord>& records, const MetricsOptions& options) {
  std::map<std::pair<std::string, int>, SampleRecord> unique;  // By (problem, sample).
  for (const auto& r : records) unique[{ProblemKey(r), r.sample}] = r;
  std::vector<SampleRecord> all;
  std::map<int, std::vector<SampleRecord>> by_level;
  for (const auto& [key, r] : unique) {
    all.push_back(r);
    by_level[r.level].push_back(r);
  }
  RunMetrics run;
  run.options = options;
  for (const auto& [level, level_records] : by_level) {
    run.levels.push_back(Summarize(level, false, level_records, options));
  }
  run.overall = Summarize(0, true, all, options);
  return run;
}

}  // namespace anvil
