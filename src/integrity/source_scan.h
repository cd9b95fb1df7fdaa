// Static scan of a candidate's C++/CUDA text (a load_inline string or a native source) for calls showing
// that the work is not done by its own kernels, or that it attacks the harness: ATen/torch compute, vendor
// libraries, threads, processes, L2 persistence, stream creation, token pasting. Comments and string
// literals are ignored. A pure function of its arguments: safe to call from any thread.
#pragma once

#include <string_view>
#include <vector>

#include "integrity/rule_hit.h"

namespace anvil {

// Returns the hits in `text` in source order, at most one per rule and line; `source_name` is copied into
// each hit. Never fails: an unterminated comment or literal simply runs to the end of the text.
// Rules (severity): cpp.aten_compute (cheat; includes of ATen native/op headers are evidence),
// cpp.vendor_library (cheat; cub block/warp primitives and CuTe are evidence), cpp.thread (cheat; host
// callbacks are evidence), cpp.process (cheat), cpp.native_tamper (cheat), cpp.file_access (cheat; getenv is
// evidence), cpp.l2_persist (cheat), cpp.stream_create (evidence), cpp.token_paste (evidence).
std::vector<RuleHit> ScanNativeSource(std::string_view text, std::string_view source_name);

// The scan's vocabulary, for other evidence (symbol tables): whether an ATen
// op name computes (matmul, relu, add, ...) rather than allocates or views.
bool IsAtenComputeName(std::string_view name);

}  // namespace anvil
