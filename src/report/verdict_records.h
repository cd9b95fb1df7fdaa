// A verdict JSON line of `anvil kernelbench` (a KernelBench-named candidate)
// reduced to what the metrics need: what `anvil kernelbench` resumes from and
// what the report of a KernelBench folder reads.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>

#include "report/metrics.h"

namespace anvil {

// A verdict's measured speedup, gates.perf[`key`] ("speedup_eager" or
// "speedup_compile"); nullopt when the verdict has none (perf off, failed,
// or not a verdict object).
std::optional<double> VerdictSpeedup(const nlohmann::json& verdict, const char* key);

// The record of one verdict, keyed by its candidate's file name
// (level_{L}_problem_{P}_sample_{S}_kernel.*), and the verdict's backend name
// in `backend`; nullopt when `verdict` is not a verdict of such a candidate.
std::optional<std::pair<std::string, SampleRecord>> RecordFromVerdictLine(const nlohmann::json& verdict,
                                                                          std::string& backend);

}  // namespace anvil
