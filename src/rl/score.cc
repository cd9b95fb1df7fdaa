#include "rl/score.h"

#include <string>
#include <vector>

namespace anvil {
namespace {

using nlohmann::json;

// The model loop's own outcomes (docs/run-db.md): no verdict behind them.
constexpr const char* kModelFailures[] = {"no_code", "truncated", "refused"};

double NumberOr(const json& j, const char* key, double fallback) {
  return j.is_object() && j.contains(key) && j[key].is_number() ? j[key].get<double>() : fallback;
}

const json& ObjectOr(const json& j, const char* key) {
  static const json kEmpty = json::object();
  return j.is_object() && j.contains(key) && j[key].is_object() ? j[key] : kEmpty;
}

}  // namespace

Result<std::optional<double>> RewardOfJson(const json& verdict, const RewardOptions& options) {
  if (!verdict.is_object()) {
    return Status::Error("a verdict is an object (the verdict JSON or a run's attempt), not " +
                         std::string(verdict.type_name()));
  }
  const bool has_status = verdict.contains("status");
  if (!has_status && !verdict.contains("outcome")) {
    return Status::Error("a verdict needs \"status\" (the verdict JSON) or \"outcome\" (a run's attempt)");
  }
  const json& name = has_status ? verdict["status"] : verdict["outcome"];
  const json& body = has_status ? verdict : ObjectOr(verdict, "verdict");
  if (!name.is_string()) return Status::Error("the verdict's status is not a string: " + name.dump());
  const std::string text = name.get<std::string>();
  if (text == "server_error") return std::optional<double>();
  for (const char* failure : kModelFailures) {
    if (text == failure) return std::optional<double>(-1.0);
  }
  const std::optional<VerdictStatus> status = StatusFromName(text);
  if (!status) {
    return Status::Error("unknown verdict status \"" + text +
                         "\" (known: the verdict's statuses, and no_code, truncated, refused, server_error)");
  }
  Verdict v;
  v.status = *status;
  v.correctness_rate = NumberOr(body, "correctness_rate", 0.0);
  const json& perf = ObjectOr(ObjectOr(body, "gates"), "perf");
  v.perf.speedup_eager = NumberOr(perf, "speedup_eager", 0.0);
  v.perf.speedup_compile = NumberOr(perf, "speedup_compile", 0.0);
  return ComputeReward(v, options);
}

Result<json> ScoreLine(const json& line, const RewardOptions& reward,
                       const std::optional<PrimeEchoOptions>& prime_echo) {
  auto value = [](const std::optional<double>& r) { return r ? json(*r) : json(nullptr); };
  json out = json::object();
  if (line.is_object() && line.contains("id")) out["id"] = line["id"];
  const bool trajectory = line.is_array() || (line.is_object() && line.contains("turns"));
  if (!trajectory) {
    auto r = RewardOfJson(line, reward);
    if (!r.ok()) return r.status();
    out["reward"] = value(r.value());
    return out;
  }
  const json& turns = line.is_array() ? line : line["turns"];
  if (!turns.is_array() || turns.empty()) return Status::Error("a trajectory's \"turns\" is a non-empty array");
  if (!prime_echo) {
    return Status::Error("a trajectory is scored by PrimeEcho: give its bonuses (--bonus-first, --bonus-second)");
  }
  std::vector<std::optional<double>> rewards;
  for (std::size_t i = 0; i < turns.size(); ++i) {
    auto r = RewardOfJson(turns[i], reward);
    if (!r.ok()) return Status::Error("turn " + std::to_string(i + 1) + ": " + r.message());
    rewards.push_back(r.value());
  }
  out["turn_rewards"] = json::array();
  for (const auto& r : rewards) out["turn_rewards"].push_back(value(r));
  out["prime_echo"] = value(PrimeEcho(rewards, *prime_echo));
  return out;
}

}  // namespace anvil
