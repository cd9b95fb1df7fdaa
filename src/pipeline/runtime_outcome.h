// How what happened in a candidate's process lands in its verdict: the run
// gate from a RunOutcome, and runtime evidence that decides a `cheat` (used by
// the evaluator's run and perf gates).
#pragma once

#include <string>

#include "integrity/rule_hit.h"
#include "run/candidate_run.h"
#include "verify/verdict.h"

namespace anvil {

// Adds one run (a phase) to the run gate.
void FromRun(const RunOutcome& r, RunGate& g);

// The hit is recorded and the candidate is a cheat; `skipped` says why no
// timing follows.
void RuntimeCheat(Verdict& v, RuleHit hit, const char* skipped);
// The same for a hit of severity cheat from runtime evidence.
void RuntimeCheat(Verdict& v, std::string rule, std::string message, const char* skipped);

// The kernel killed a candidate process for a forbidden system call: an
// attempt to leave the sandbox.
void SandboxViolation(Verdict& v, const std::string& when);

// timeout or runtime_error.
VerdictStatus RunFailureStatus(const RunGate& g);

}  // namespace anvil
