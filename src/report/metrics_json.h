// Metrics as JSON: what `anvil kernelbench --json` prints and what the run
// report embeds, written in one place so both say the same numbers
// (docs/kernelbench.md lists the keys).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "report/metrics.h"
#include "report/run_records.h"
#include "runs/run_db.h"

namespace anvil {

// "0" for 0, else one decimal at least: KernelBench's fast_0, fast_1.0, fast_0.5.
std::string FastPLabel(double p);

// One level's (or the whole run's) metrics.
nlohmann::json LevelJson(const LevelMetrics& m);

// Adds "degenerate_problems" and "without_degenerate" (the levels and overall
// metrics of the other problems; null when there are none) to `report`.
void AddDegenerateJson(const std::vector<SampleRecord>& records, const MetricsOptions& options, nlohmann::json& report);

// A run database's metrics at each turn of `turns` (each in 1 ..
// by_turn.size()), from its info and RecordsByTurn: {"run": run_label,
// "model", "prompt", "backend", "samples", "faster_than", "turns": [{"turn",
// "pending", "server_errors", "levels", "overall", "degenerate_problems",
// "without_degenerate"}]}. Empty `turns`: every turn.
nlohmann::json RunMetricsJson(const RunInfo& info, const std::vector<TurnRecords>& by_turn,
                              const std::string& run_label, std::vector<int> turns, double faster_than);

}  // namespace anvil
