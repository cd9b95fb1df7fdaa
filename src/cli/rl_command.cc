// `anvil rl score --jsonl FILE`: one JSON line out per JSON line in — a
// verdict's reward (MusaCoder eq. 2), or a trajectory's turn rewards and its
// PrimeEcho score (docs/rl.md) — the same numbers as python/anvil_rl. A line
// that cannot be scored gets {"error": ...} in its place and the others go on.
// Exit 0 when every line was scored, 2 for bad usage or any bad line, 1 when
// the output could not be written.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "cli/commands.h"
#include "rl/score.h"

namespace anvil {
namespace {

struct ScoreArgs {
  std::string jsonl;
  double lambda = 0.5;
  double nu_max = 4;
  std::string reward_vs = "eager";
  double alpha = 0.75;
  std::optional<double> bonus_first;
  std::optional<double> bonus_second;
};

int Score(const ScoreArgs& a) {
  const char* me = "anvil rl score";
  if (a.bonus_first.has_value() != a.bonus_second.has_value()) {
    std::fprintf(stderr, "%s: give both PrimeEcho bonuses (--bonus-first and --bonus-second) or neither\n", me);
    return kExitUsage;
  }
  if (a.alpha < 0 || a.alpha > 1) {
    std::fprintf(stderr, "%s: --alpha is a weight in [0, 1], not %g\n", me, a.alpha);
    return kExitUsage;
  }
  RewardOptions reward;
  reward.lambda = a.lambda;
  reward.nu_max = a.nu_max;
  reward.against_compile = a.reward_vs == "compile";
  std::optional<PrimeEchoOptions> prime_echo;
  if (a.bonus_first) prime_echo = PrimeEchoOptions{a.alpha, *a.bonus_first, *a.bonus_second};

  std::ifstream file;
  if (a.jsonl != "-") {
    file.open(a.jsonl);
    if (!file) {
      std::fprintf(stderr, "%s: cannot read %s\n", me, a.jsonl.c_str());
      return kExitUsage;
    }
  }
  std::istream& in = a.jsonl == "-" ? std::cin : file;
  std::string text;
  int number = 0, bad = 0, scored = 0;
  while (std::getline(in, text)) {
    ++number;
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    const nlohmann::json line = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    Result<nlohmann::json> out =
        line.is_discarded() ? Result<nlohmann::json>(Status::Error("not JSON")) : ScoreLine(line, reward, prime_echo);
    if (!out.ok()) {
      ++bad;
      std::fprintf(stderr, "%s: %s:%d: %s\n", me, a.jsonl.c_str(), number, out.message().c_str());
      std::cout << nlohmann::json{{"line", number}, {"error", out.message()}}.dump() << '\n';
    } else {
      ++scored;
      std::cout << out.value().dump() << '\n';
    }
  }
  std::cout.flush();
  if (!std::cout) {
    std::fprintf(stderr, "%s: cannot write the scores\n", me);
    return kExitFailure;
  }
  if (bad > 0) {
    std::fprintf(stderr, "%s: %d of %d line(s) could not be scored (their errors are in the output)\n", me, bad,
                 bad + scored);
    return kExitUsage;
  }
  return kExitOk;
}

}  // namespace

void RegisterRl(CLI::App& app, int& exit_code) {
  CLI::App* rl = app.add_subcommand("rl", "The RL parts (docs/rl.md): rewards and PrimeEcho scores");
  rl->require_subcommand(1);
  auto args = std::make_shared<ScoreArgs>();
  CLI::App* score = rl->add_subcommand(
      "score",
      "Score JSON lines: a verdict (or a run's attempt) by its reward, a trajectory ({\"turns\": [...]}) "
      "by PrimeEcho");
  score->add_option("--jsonl", args->jsonl, "The lines to score (- for standard input)")->required();
  score->add_option("--lambda", args->lambda, "Reward: weight of the speedup bonus")->capture_default_str();
  score->add_option("--nu-max", args->nu_max, "Reward: cap on speedup - 1")->capture_default_str();
  score->add_option("--reward-vs", args->reward_vs, "Reward: speedup against eager or compile")
      ->check(CLI::IsMember({"eager", "compile"}))
      ->capture_default_str();
  score->add_option("--alpha", args->alpha, "PrimeEcho: the first turn's weight")->capture_default_str();
  score->add_option("--bonus-first", args->bonus_first,
                    "PrimeEcho: bonus when turn 1 passed (no default: the paper gives none)");
  score->add_option("--bonus-second", args->bonus_second,
                    "PrimeEcho: bonus when turn 2 was the first to pass (no default)");
  score->callback([args, &exit_code] { exit_code = Score(*args); });
}

}  // namespace anvil
