// Gate 3's static evidence: the candidate's Python read through Python's own
// parser (anvil_py.static_check, run in a trusted process that never executes
// the candidate) and its C++/CUDA sources scanned for forbidden calls. Rules
// and severities are listed in docs/rules.md. Thread-safe.
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"
#include "integrity/native_source.h"
#include "integrity/source_expand.h"
#include "verify/verdict.h"

namespace anvil {

// Fills `gate` from the Python file (kernelbench format only) and the native
// sources (`includes`: where their headers are, for the preprocessor's
// fallback, integrity/source_expand.h). `kernelbench_checks` ("cpu",
// "cuda"; "" for none): KernelBench's static checker runs too, with its
// backend check for that backend (Policy::kernelbench_static). Error only
// when the checker itself cannot run.
Status CheckStaticLegality(const std::filesystem::path& candidate, const std::string& format,
                           const NativeSources& native_sources, const IncludeDirs& includes, LegalGate& gate,
                           const std::string& kernelbench_checks = "");

// ANVIL_STATIC_VERDICTS=0 (or `always`): the gate's cheat hits are kept as
// evidence and the candidate runs, so that the run-time layers behind them
// (the sandbox, the traces) can be tested on candidates the static rules
// already catch, and a task's reference can run as its candidate. A no-op
// otherwise.
void DemoteStaticCheats(LegalGate& gate, bool always = false);

// The verdict's policy: a cheat hit of a rule it allows (Policy::Allows:
// torch compute and vendor libraries under kernelbench) becomes evidence,
// its message naming the policy. Whether it did.
bool AllowByPolicy(const Policy& policy, RuleHit& hit);
// The same for every hit of the gate, which is then ok unless a cheat is left.
void AllowByPolicy(const Policy& policy, LegalGate& gate);

}  // namespace anvil
