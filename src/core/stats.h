// Robust statistics of repeated timings: median and inter-quartile range
// rather than mean and min, plus the coefficient of variation. Pure functions.
#pragma once

#include <vector>

namespace anvil {

struct TimingStats {
  int samples = 0;
  double median_ms = 0;
  double mean_ms = 0;
  double min_ms = 0;
  double max_ms = 0;
  double p25_ms = 0;
  double p75_ms = 0;
  double iqr_ms = 0;
  double cv = 0;  // Standard deviation / mean.
};

// Stats of `times_ms`; all zero for an empty input.
TimingStats ComputeStats(std::vector<double> times_ms);

}  // namespace anvil
