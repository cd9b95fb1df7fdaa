// A task's spec (docs/spec.md) as prompt text: every input, parameter,
// buffer and output with its shape, strides and dtype, the hyper-parameters,
// and the per-op shape trace. Pure functions; thread-safe.
#pragma once

#include <string>

namespace anvil {

// The tensors and hyper-parameters, one line each. `spec_json` "" or not a
// spec: a line saying the metadata could not be derived, and `why`.
std::string TensorMetadataText(const std::string& spec_json, const std::string& why);

// One line per aten op (name, input shapes -> output shapes), runs of the same
// line collapsed ("x3"), at most `max_lines` lines then how many more.
std::string OpTraceText(const std::string& spec_json, int max_lines = 60);

}  // namespace anvil
