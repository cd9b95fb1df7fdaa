// Scoring what a trainer holds as JSON: one verdict (or a run's attempt, or a
// model outcome) by the paper's reward, and one trajectory (its turns in order)
// by PrimeEcho over those rewards. The same answers as python/anvil_rl's
// reward and prime_echo (docs/rl.md); `anvil rl score` prints them. Pure.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>

#include "core/status.h"
#include "rl/prime_echo.h"
#include "verify/reward.h"

namespace anvil {

// The reward of a verdict JSON ({"status": ...}), of a run database's attempt
// ({"outcome": ..., "verdict": ...}) or of a model outcome ({"outcome":
// "no_code"}): -1 for no_code, truncated and refused, none for infra_error and
// server_error. Error for anything else (an unknown status, no status).
Result<std::optional<double>> RewardOfJson(const nlohmann::json& verdict, const RewardOptions& options);

// One input line scored: a verdict gives {"reward": r}; a trajectory
// ({"turns": [verdict, ...]}, or a bare array of them) gives {"turn_rewards":
// [...], "prime_echo": R}; none is null. `prime_echo` may be null only when
// the line has no trajectory. Keys "id" are copied through.
Result<nlohmann::json> ScoreLine(const nlohmann::json& line, const RewardOptions& reward,
                                 const std::optional<PrimeEchoOptions>& prime_echo);

}  // namespace anvil
