#include "core/stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace anvil {
namespace {

// Linear interpolation between closest ranks, as numpy's default.
double Quantile(const std::vector<double>& sorted, double q) {
  double pos = q * static_cast<double>(sorted.size() - 1);
  auto lo = static_cast<std::size_t>(std::floor(pos));
  std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  double frac = pos - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

}  // namespace

TimingStats ComputeStats(std::vector<double> times_ms) {
  TimingStats s;
  if (times_ms.empty()) return s;
  std::sort(times_ms.begin(), times_ms.end());
  s.samples = static_cast<int>(times_ms.size());
  s.min_ms = times_ms.front();
  s.max_ms = times_ms.back();
  s.median_ms = Quantile(times_ms, 0.5);
  s.p25_ms = Quantile(times_ms, 0.25);
  s.p75_ms = Quantile(times_ms, 0.75);
  s.iqr_ms = s.p75_ms - s.p25_ms;
  s.mean_ms = std::accumulate(times_ms.begin(), times_ms.end(), 0.0) / s.samples;
  double var = 0;
  for (double t : times_ms) var += (t - s.mean_ms) * (t - s.mean_ms);
  var /= s.samples;
  s.cv = s.mean_ms > 0 ? std::sqrt(var) / s.mean_ms : 0;
  return s;
}

}  // namespace anvil
