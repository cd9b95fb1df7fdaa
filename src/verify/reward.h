// The paper's reward s(c) (MusaCoder eq. 2): -1 when the candidate fails to
// compile or run, cheats, or is never correct; -0.5 + 0.5 q when only some
// trials are correct; 1 + lambda * min(max(nu - 1, 0), nu_max) when every trial
// is correct and it is legal (nu = speedup). Pure function.
#pragma once

#include <optional>

#include "verify/verdict.h"

namespace anvil {

struct RewardOptions {
  double lambda = 0.5;           // Weight of the speedup bonus.
  double nu_max = 4.0;           // Cap on (speedup - 1).
  bool against_compile = false;  // Speedup vs torch.compile instead of eager.
};

// Uses verdict.status, correctness_rate and the perf gate's speedup; none
// for infra_error (the machine failed: nothing the candidate did is scored).
std::optional<double> ComputeReward(const Verdict& verdict, const RewardOptions& options);

}  // namespace anvil
