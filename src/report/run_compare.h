// `anvil compare`: two run databases side by side (docs/report.md): each
// run's metrics per level at a turn, the problems (matched by level and name)
// one run solves and the other does not, and the speedup change on the
// problems both solve.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "core/status.h"
#include "runs/run_db.h"

namespace anvil {

struct CompareOptions {
  std::string turn = "last";  // first, last or K: the turn each run is taken at.
  double faster_than = 1.1;
};

// {"a": RUN, "b": RUN, "warnings": [...], "levels": [{"level", "a", "b"}],
// "overall": {"a", "b"}, "problems": {"matched", "only_a", "only_b"},
// "solved": {"both", "only_a", "only_b"}, "speedups": [{"problem", "a", "b",
// "change"}], "speedup_change_geomean"}. RUN: {"run", "model", "backend",
// "samples", "turn"}; "a" and "b" of a level are LevelJson or null where the
// run has no problem of that level. Error: a database's, or a turn a run does
// not have.
Result<nlohmann::json> CompareRuns(RunDb& a, const std::string& label_a, RunDb& b, const std::string& label_b,
                                   const CompareOptions& options);

}  // namespace anvil
