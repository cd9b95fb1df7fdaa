// PrimeEcho (MusaCoder §5): a multi-turn trajectory's reward anchored on its
// first turn, R = alpha * s1 + (1 - alpha) * max(s) + b, where b is
// bonus_first when turn 1 passed (s1 >= 1), bonus_second when turn 2 was the
// first to pass, else 0. The same function as python/anvil_rl's prime_echo
// (docs/rl.md). Pure; thread-safe.
#pragma once

#include <optional>
#include <vector>

namespace anvil {

struct PrimeEchoOptions {
  double alpha = 0.75;
  // The paper gives no values: whoever scores sets them (anvil rl score and
  // anvil generate require them).
  double bonus_first = 0;
  double bonus_second = 0;
};

// None when any turn's reward is none (the machine failed on the trajectory)
// or there is no turn.
std::optional<double> PrimeEcho(const std::vector<std::optional<double>>& turn_rewards,
                                const PrimeEchoOptions& options);

}  // namespace anvil
