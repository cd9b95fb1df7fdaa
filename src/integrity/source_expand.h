// The candidate's own macros, expanded: what its C++/CUDA text says once the
// preprocessor has run (token pasting resolved, its macros applied, dead
// #if branches gone), for the source scan to read a second time (issue 4:
// "C++/CUDA sources after preprocessing"). Includes are dropped first — the
// scan judges the candidate's text, not torch's or CUDA's headers — so macros
// those headers define stay as written. Runs `g++ -E`; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "integrity/rule_hit.h"

namespace anvil {

// `text` preprocessed, line for line: output line K holds what input line K
// became (a macro spanning lines lands on its first). Error when the
// preprocessor fails (an #error, a malformed directive).
Result<std::string> ExpandOwnMacros(std::string_view text);

// ScanNativeSource over the expanded text: the hits the raw scan of `text`
// did not have (by rule and line), marked as found after preprocessing. A text
// the preprocessor rejects gives one evidence hit, cpp.unexpanded.
std::vector<RuleHit> ScanExpandedSource(std::string_view text, std::string_view source_name,
                                        const std::vector<RuleHit>& raw_hits);

}  // namespace anvil
