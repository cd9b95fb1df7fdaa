#include "rl/prime_echo.h"

#include <algorithm>

namespace anvil {

std::optional<double> PrimeEcho(const std::vector<std::optional<double>>& turn_rewards,
                                const PrimeEchoOptions& options) {
  if (turn_rewards.empty()) return std::nullopt;
  if (std::any_of(turn_rewards.begin(), turn_rewards.end(), [](const auto& s) { return !s; })) return std::nullopt;
  const double first = *turn_rewards[0];
  double best = first;
  for (const auto& s : turn_rewards) best = std::max(best, *s);
  double bonus = 0;
  if (first >= 1.0) {
    bonus = options.bonus_first;
  } else if (turn_rewards.size() > 1 && *turn_rewards[1] >= 1.0) {
    bonus = options.bonus_second;
  }
  return options.alpha * first + (1.0 - options.alpha) * best + bonus;
}

}  // namespace anvil
