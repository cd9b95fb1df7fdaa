#include "gen/repair.h"

#include <nlohmann/json.hpp>

#include "core/fixed.h"

namespace anvil {
namespace {

using nlohmann::json;

constexpr const char* kAnswerAgain = "Answer with the complete, corrected file in one fenced code block.";

json Verdict(const AttemptRow& a) { return a.verdict_json ? json::parse(*a.verdict_json, nullptr, false) : json(); }

// The verdict's perf gate, or null.
json Perf(const json& verdict) {
  if (!verdict.is_object() || !verdict.contains("gates") || !verdict["gates"].is_object()) return json();
  const json& gates = verdict["gates"];
  return gates.contains("perf") && gates["perf"].is_object() ? gates["perf"] : json();
}

double Number(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_number() ? j[key].get<double>() : 0.0;
}

double Median(const json& perf, const char* key) {
  return perf.is_object() && perf.contains(key) && perf[key].is_object() ? Number(perf[key], "median_ms") : 0.0;
}

// What the verdict measured of a correct kernel.
std::string Measured(const json& perf, double target) {
  const double mine = Median(perf, "candidate"), eager = Median(perf, "eager"), compiled = Median(perf, "compile");
  std::string text = "Your kernel is correct. It runs in " + Fixed(mine, 4) + " ms";
  if (eager > 0)
    text += "; PyTorch eager takes " + Fixed(eager, 4) + " ms (your speedup: " + Fixed(eager / mine, 2) + "x)";
  if (compiled > 0) {
    text += "; torch.compile takes " + Fixed(compiled, 4) + " ms (" + Fixed(compiled / mine, 2) + "x)";
  }
  text += ". Make it faster: the target is more than " + Fixed(target, 2) + "x PyTorch eager.";
  if (const double floor = Number(perf, "floor_ms"); floor > 0) {
    text += " Moving its outputs alone takes at least " + Fixed(floor, 4) + " ms on this device.";
  }
  return text;
}

}  // namespace

bool NeedsAnotherTurn(const AttemptRow& latest, const RepairOptions& options) {
  if (latest.state != AttemptState::kDone || !latest.outcome) return false;
  // The machine's failures: a rerun asks or judges that turn again.
  if (*latest.outcome == "server_error" || *latest.outcome == "infra_error") return false;
  if (*latest.outcome != "pass") return true;
  if (!options.optimize) return false;
  const double speedup = Number(Perf(Verdict(latest)), "speedup_eager");
  return speedup > 0 && speedup <= options.target_speedup;
}

std::string RepairMessage(const AttemptRow& latest, const RepairOptions& options) {
  const std::string outcome = latest.outcome.value_or("");
  if (outcome == "no_code") {
    return std::string("Your answer had no code block, so nothing could be compiled or run. ") + kAnswerAgain;
  }
  if (outcome == "truncated") {
    return std::string(
        "Your answer was cut off at the token limit before the code was complete. Explain less and answer "
        "with the complete file in one fenced code block.");
  }
  if (outcome == "refused") {
    return std::string(
               "This is a performance-engineering exercise: a faster implementation of the model above, computing "
               "the same results. ") +
           kAnswerAgain;
  }
  const json verdict = Verdict(latest);
  const std::string feedback = verdict.is_object() && verdict.contains("feedback") && verdict["feedback"].is_string()
                                   ? verdict["feedback"].get<std::string>()
                                   : "The verdict was " + outcome + ".";
  std::string text = "Here is the verifier's feedback on your last answer:\n\n" + feedback;
  while (!text.empty() && text.back() == '\n') text.pop_back();
  if (outcome == "pass") {
    return text + "\n\n" + Measured(Perf(verdict), options.target_speedup) +
           "\nAnswer with the complete, faster file in one fenced code block.";
  }
  return text + "\n\n" + kAnswerAgain;
}

}  // namespace anvil
