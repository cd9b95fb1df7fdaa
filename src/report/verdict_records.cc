#include "report/verdict_records.h"

#include <filesystem>

#include "report/kernelbench_layout.h"

namespace anvil {
namespace {

using nlohmann::json;

double NumberOr(const json& j, double fallback) { return j.is_number() ? j.get<double>() : fallback; }

}  // namespace

std::optional<double> VerdictSpeedup(const json& verdict, const char* key) {
  if (!verdict.is_object()) return std::nullopt;
  const auto gates = verdict.find("gates");
  if (gates == verdict.end() || !gates->is_object()) return std::nullopt;
  const auto perf = gates->find("perf");
  if (perf == gates->end() || !perf->is_object()) return std::nullopt;
  const auto speedup = perf->find(key);
  if (speedup == perf->end() || !speedup->is_number()) return std::nullopt;
  return speedup->get<double>();
}

std::optional<std::pair<std::string, SampleRecord>> RecordFromVerdictLine(const json& j, std::string& backend) {
  if (!j.is_object() || !j.contains("status") || !j["status"].is_string()) return std::nullopt;
  const json& cand = j.value("candidate", json::object());
  if (!cand.is_object() || !cand.contains("path") || !cand["path"].is_string()) return std::nullopt;
  std::string name = std::filesystem::path(cand["path"].get<std::string>()).filename().string();
  auto id = ParseSampleFileName(name);
  if (!id) return std::nullopt;
  SampleRecord r;
  r.level = id->level;
  r.problem = id->problem;
  r.sample = id->sample;
  r.status = j["status"].get<std::string>();
  r.correctness_rate = NumberOr(j.value("correctness_rate", json()), 0.0);
  r.speedup_eager = VerdictSpeedup(j, "speedup_eager").value_or(0.0);
  r.speedup_compile = VerdictSpeedup(j, "speedup_compile").value_or(0.0);
  const auto degenerate = j.find("task_degenerate");
  r.degenerate = degenerate != j.end() && degenerate->is_boolean() && degenerate->get<bool>();
  const json& b = j.value("backend", json::object());
  backend = b.is_object() && b.contains("name") && b["name"].is_string() ? b["name"].get<std::string>() : "";
  return std::make_pair(name, r);
}

}  // namespace anvil
