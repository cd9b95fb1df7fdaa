// What the candidate worker reported on anvil's report channel
// (python/anvil_py/report_channel.py, docs/protocol.md), judged: the ops and
// host transfers its traces saw and what its tamper guard found, added to
// what its files say (a file can be rewritten by the candidate's code; a
// line sent cannot be taken back), and the digest of the kernel trace it
// wrote checked against the file anvil will read. A trace that changed after
// the worker wrote it, or that it never wrote, is forged (rule
// run.forged_output); outputs never reach a file (the task server compares
// them in its buffers). Pure functions over the lines and the folder;
// thread-safe.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "run/candidate_run.h"

namespace anvil {

// Adds the report's findings to `out` (aten_compute, host_compute,
// compute_seen_in, tampered, forged). `complete`: the worker ran to its end
// (exited 0), so a kernel trace in `out_dir` must carry a seal; otherwise
// only one with a seal is checked.
void JudgeWorkerReport(const std::vector<std::string>& lines, bool overflowed, const std::filesystem::path& out_dir,
                       bool complete, RunOutcome& out);

}  // namespace anvil
