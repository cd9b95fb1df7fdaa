#include "report/metrics_json.h"

#include <algorithm>
#include <cstdio>

namespace anvil {

using nlohmann::json;

std::string FastPLabel(double p) {
  if (p == 0) return "0";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", p);
  std::string s = buf;
  return s.find('.') == std::string::npos ? s + ".0" : s;
}

json LevelJson(const LevelMetrics& m) {
  json fast = json::object();
  for (const auto& f : m.fast_p) fast[FastPLabel(f.p)] = f.fraction;
  auto geomean = [](const SpeedupMean& s) { return s.samples > 0 ? json(s.geomean) : json(nullptr); };
  json j = {{"level", m.whole_run ? json("all") : json(m.level)},
            {"problems", m.problems},
            {"problems_judged", m.problems_judged()},
            {"unjudged_problems", m.unjudged_problems},
            {"samples", m.samples},
            {"unjudged", m.unjudged},
            {"passed", m.passed},
            {"n", m.samples_max},
            {"samples_per_problem", {{"min", m.samples_min}, {"max", m.samples_max}}},
            {"pass_at_k_pct", {{"1", m.pass_at_1}, {std::to_string(std::max(m.samples_max, 1)), m.pass_at_n}}},
            {"avg_at_n_pct", m.avg_at_n},
            {"mean_correctness_rate", m.mean_correctness},
            {"faster_rate_pct", {{"eager", m.faster_eager}, {"compile", m.faster_compile}}},
            {"geomean_speedup", {{"eager", geomean(m.speedup_eager)}, {"compile", geomean(m.speedup_compile)}}},
            {"geomean_samples", {{"eager", m.speedup_eager.samples}, {"compile", m.speedup_compile.samples}}},
            {"fast_p", fast},
            {"sample0_missing", m.sample0_missing},
            {"speedup_unknown", m.speedup_unknown},
            {"statuses", m.by_status}};
  return j;
}

void AddDegenerateJson(const std::vector<SampleRecord>& records, const MetricsOptions& options, json& report) {
  const std::vector<std::string> degenerate = DegenerateProblems(records);
  report["degenerate_problems"] = degenerate;
  if (degenerate.empty()) {
    report["without_degenerate"] = nullptr;
    return;
  }
  const RunMetrics rest = ComputeMetrics(WithoutDegenerate(records), options);
  json levels = json::array();
  for (const auto& l : rest.levels) levels.push_back(LevelJson(l));
  report["without_degenerate"] = {{"levels", levels}, {"overall", LevelJson(rest.overall)}};
}

json RunMetricsJson(const RunInfo& info, const std::vector<TurnRecords>& by_turn, const std::string& run_label,
                    std::vector<int> turns, double faster_than) {
  if (turns.empty()) {
    for (int k = 1; k <= static_cast<int>(by_turn.size()); ++k) turns.push_back(k);
  }
  MetricsOptions mo;
  mo.faster_than = faster_than;
  json shown = json::array();
  for (int k : turns) {
    const TurnRecords& t = by_turn.at(k - 1);
    const RunMetrics metrics = ComputeMetrics(t.records, mo);
    json levels = json::array();
    for (const auto& l : metrics.levels) levels.push_back(LevelJson(l));
    json turn = {{"turn", k},
                 {"pending", t.pending},
                 {"server_errors", t.server_errors},
                 {"levels", levels},
                 {"overall", LevelJson(metrics.overall)}};
    AddDegenerateJson(t.records, mo, turn);
    shown.push_back(std::move(turn));
  }
  return json{{"run", run_label},        {"model", info.model},     {"prompt", info.prompt_id},
              {"backend", info.backend}, {"samples", info.samples}, {"faster_than", faster_than},
              {"turns", shown}};
}

}  // namespace anvil
