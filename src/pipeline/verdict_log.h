// A verdict file (`--out`, one verdict JSON per line) read back to resume an
// interrupted run. A last line the interruption cut short is dropped from the
// file, so appending starts on a fresh line; a whole last line that only lacks
// its newline gets one.
#pragma once

#include <filesystem>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "core/status.h"

namespace anvil {

struct VerdictLine {
  int line = 0;     // 1-based.
  bool ok = false;  // Parsed as a JSON object.
  std::string text;
};

// Every non-blank line of `file` (none when it does not exist); `who` names
// the command in the warning about a dropped last line.
Result<std::vector<VerdictLine>> ReadVerdictLines(const std::filesystem::path& file, const std::string& who);

// Keys of the verdicts already in `file` for `backend` and the policy
// `policy_id` (Policy::Id) that need no rerun (every status but
// infra_error): "<task path>\t<candidate path>", both absolute. Malformed
// lines are skipped with a warning.
Result<std::vector<std::string>> FinishedJobs(const std::filesystem::path& file, const std::string& backend,
                                              const std::string& policy_id, const std::string& who);
// The id of the policy a verdict JSON was judged under: "musacoder/1" for a
// schema 1 verdict, which has no policy block (it was judged by those rules).
std::string VerdictPolicyId(const nlohmann::json& verdict);

std::string JobKey(const std::filesystem::path& task, const std::filesystem::path& candidate);

}  // namespace anvil
