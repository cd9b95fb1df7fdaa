#include "integrity/static_legal.h"

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string_view>

#include "core/python.h"
#include "integrity/source_expand.h"
#include "integrity/source_scan.h"

namespace anvil {

namespace {
constexpr std::chrono::seconds kCheckerDeadline{60};
}  // namespace

Status CheckStaticLegality(const std::filesystem::path& candidate, const std::string& format,
                           const NativeSources& native_sources, const IncludeDirs& includes, LegalGate& gate,
                           const std::string& kernelbench_checks) {
  gate.ran = true;
  if (format == "kernelbench") {
    ProcessSpec spec = PythonWorkerSpec("static_check", {"--candidate", candidate.string(), "--format", format});
    if (!kernelbench_checks.empty()) {
      spec.argv.push_back("--kernelbench-checks");
      spec.argv.push_back(kernelbench_checks);
    }
    spec.deadline = kCheckerDeadline;
    auto r = RunProcess(spec);
    if (!r.ok()) return r.status();
    if (!r.value().Succeeded()) {
      return Status::Error("the static checker failed (" + r.value().Describe() + "): " + TailLines(r.value().err, 5));
    }
    nlohmann::json j = nlohmann::json::parse(r.value().out, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return Status::Error("the static checker printed malformed JSON");
    if (j.contains("parse_error") && j["parse_error"].is_string()) {
      gate.python_parse_error = j["parse_error"].get<std::string>();
    }
    for (const auto& h : j.value("hits", nlohmann::json::array())) {
      RuleHit hit;
      hit.rule = h.value("rule", "");
      hit.severity = h.value("severity", "evidence");
      hit.line = h.value("line", 0);
      hit.column = h.value("col", 0);
      hit.excerpt = h.value("excerpt", "");
      hit.message = h.value("message", "");
      hit.source = candidate.filename().string();
      gate.hits.push_back(std::move(hit));
    }
  }
  for (const auto& source : native_sources) {
    std::vector<RuleHit> raw = ScanNativeSource(source.text, source.name);
    // The same text again once its own macros have run: pasted and macro-built names.
    std::vector<RuleHit> expanded = ScanExpandedSource(source, raw, includes);
    for (auto& hit : raw) gate.hits.push_back(std::move(hit));
    for (auto& hit : expanded) gate.hits.push_back(std::move(hit));
  }
  for (const auto& h : gate.hits) {
    if (h.severity == "cheat") gate.ok = false;
  }
  return Status::Ok();
}

void DemoteStaticCheats(LegalGate& gate, bool always) {
  const char* env = std::getenv("ANVIL_STATIC_VERDICTS");
  const bool by_env = env != nullptr && std::string_view(env) == "0";
  if (!by_env && !always) return;
  for (RuleHit& hit : gate.hits) {
    if (hit.severity != "cheat") continue;
    hit.severity = "evidence";
    hit.message += by_env ? " [a cheat; ANVIL_STATIC_VERDICTS=0 let the candidate run]"
                          : " [a cheat; anvil's task probe runs the reference as the candidate]";
  }
  gate.ok = true;
}

bool AllowByPolicy(const Policy& policy, RuleHit& hit) {
  if (hit.severity != "cheat" || !policy.Allows(hit.rule)) return false;
  hit.severity = "evidence";
  hit.message += " [evidence only: policy " + policy.name + " allows it]";
  return true;
}

void AllowByPolicy(const Policy& policy, LegalGate& gate) {
  bool cheat = false;
  for (RuleHit& hit : gate.hits) {
    AllowByPolicy(policy, hit);
    cheat = cheat || hit.severity == "cheat";
  }
  gate.ok = !cheat;
}

}  // namespace anvil
