// The candidate's own macros, expanded: what its C++/CUDA text says once the
// preprocessor has run (token pasting resolved, its macros applied, dead
// #if branches gone), for the source scan to read a second time (issue 4:
// "C++/CUDA sources after preprocessing"). The preprocessor sees what the
// build's does: the build's -D/-U flags, nvcc's __CUDACC__ for CUDA (and a
// second, device pass with __CUDA_ARCH__), none of it for C++. Includes are
// dropped first — the scan judges the candidate's text, not torch's or
// CUDA's headers — so macros those headers define stay as written; `#error`
// and `#warning` lines are blanked (a source must not blind the scan with
// one). Where that still fails (an #if on a header's function-like macro),
// the text is preprocessed again with its includes, from the given include
// folders, and only its own lines are kept. Runs `g++ -E` in the compiler
// sandbox; thread-safe.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "integrity/native_source.h"
#include "integrity/rule_hit.h"

namespace anvil {

// Where the fallback finds the headers a source includes (torch's, CUDA's, Python's).
using IncludeDirs = std::vector<std::filesystem::path>;

// `source`'s text preprocessed, line for line: output line K holds what input
// line K became (a macro spanning lines lands on its first); `device` is the
// CUDA device pass. Error when the preprocessor fails both ways.
Result<std::string> ExpandOwnMacros(const NativeSource& source, const IncludeDirs& includes = {}, bool device = false);

// ScanNativeSource over the expanded text (for CUDA, both passes): the hits
// the raw scan of the text did not have (by rule and line), marked as found
// after preprocessing. A text the preprocessor rejects gives one evidence
// hit, cpp.unexpanded (the build's preprocessor rejects it as well).
std::vector<RuleHit> ScanExpandedSource(const NativeSource& source, const std::vector<RuleHit>& raw_hits,
                                        const IncludeDirs& includes = {});

}  // namespace anvil
