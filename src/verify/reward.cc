#include "verify/reward.h"

#include <algorithm>

namespace anvil {

std::optional<double> ComputeReward(const Verdict& v, const RewardOptions& options) {
  const double q = v.correctness_rate;
  switch (v.status) {
    case VerdictStatus::kPass: {
      double nu = options.against_compile ? v.perf.speedup_compile : v.perf.speedup_eager;
      if (nu <= 0) nu = 1.0;  // Speedup unknown: no bonus, no penalty.
      return 1.0 + options.lambda * std::min(std::max(nu - 1.0, 0.0), options.nu_max);
    }
    case VerdictStatus::kWrongAnswer:
      return q > 0 ? -0.5 + 0.5 * q : -1.0;
    case VerdictStatus::kInfraError:
      return std::nullopt;
    default:
      return -1.0;
  }
}

}  // namespace anvil
