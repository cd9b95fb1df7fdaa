// `anvil report`: a run as one self-contained HTML page (docs/report.md). The
// page draws itself from data embedded in it as JSON; its script and style
// are allowed by hash in its Content-Security-Policy and nothing else may
// load or run, and every text of the run reaches the page as text.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/status.h"
#include "runs/run_db.h"

namespace anvil {

struct ReportOptions {
  double faster_than = 1.1;  // Faster Rate counts speedup > this (as anvil kernelbench --faster-than).
};

// What the page shows of a run database. `data` is drawn at load:
// {"anvil_report": 1, "metrics": RunMetricsJson over every turn, "tasks":
// [...], "stage_seconds": {stage: seconds over every attempt}, "samples":
// [{"task", "sample", "prime_echo", "attempts": [{"turn", "state", "outcome",
// "reward", "cached", "speedup_eager", "speedup_compile", "text": [CHUNK,
// INDEX]}]}]}. The attempts' texts (code, feedback, the model's answer, the
// verdict, stage times) are in `texts`, one JSON array per task: the page
// embeds each gzip-compressed and reads it when one of its candidates opens.
struct ReportData {
  nlohmann::json data;
  std::vector<nlohmann::json> texts;
};

// Reads only. Error: the database's.
Result<ReportData> RunReportData(RunDb& db, const std::string& run_label, const ReportOptions& options);

// The same for a KernelBench folder judged by `anvil kernelbench`, from its
// verdicts file (the folder's anvil_verdicts.jsonl): one turn, one attempt a
// sample (the file's last verdict of each candidate), its code read from the
// candidate's file where it still is, no model answer. Its metrics are
// `anvil kernelbench --run DIR --json`'s levels and overall. Error: the file
// cannot be read, or holds no verdict of a KernelBench-named candidate.
Result<ReportData> FolderReportData(const std::filesystem::path& verdicts, const std::string& run_label,
                                    const ReportOptions& options);

// `data` as text safe inside a <script> element: JSON with every '<', '>',
// '&', U+2028, U+2029 and other non-ASCII character written as a JSON \u
// escape ('<' as \u003c).
std::string ScriptSafeJson(const nlohmann::json& data);

// The page around `report`, with its Content-Security-Policy. Error: zlib's.
Result<std::string> ReportPage(const ReportData& report);

// The comparison of two runs (report/run_compare.h's JSON) as a page of its own, under the same policy.
std::string ComparePage(const nlohmann::json& comparison);

}  // namespace anvil
