// A comparing task server session's results (tasks/task_server.h;
// docs/protocol.md, "comparing sessions") as the correctness gate's trial
// checks: the same TrialCheck a comparison of files gives, so the verdict,
// its feedback and the reward read them alike. Pure; thread-safe.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "verify/verdict.h"

namespace anvil {

// One check per trial 0..trials-1, from the server's "results": a trial it
// has none of is "missing" (the candidate never handed its outputs over); one
// the worker found of another count, shape or dtype than the reference's is
// "output count", "shape" or "dtype", nothing compared. Malformed fields read
// as a failed comparison, never a pass.
std::vector<TrialCheck> TrialChecksFromServer(const nlohmann::json& results, int trials);

}  // namespace anvil
