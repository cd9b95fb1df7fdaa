// The environment of every child anvil starts (workers, the zygote, compilers,
// probes): the variables of anvil's own environment that toolchains, Python,
// CUDA and anvil's workers need, chosen by an allowlist, then what the caller
// adds. Anything else in anvil's environment (a model's API key, a cloud
// token) never reaches a child, so candidate code cannot print it into its
// feedback. Thread-safe: reads `environ` only.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace anvil {

using EnvPairs = std::vector<std::pair<std::string, std::string>>;

// Whether a variable of anvil's environment may pass to a child: an allowed
// name or prefix (PATH, LD_LIBRARY_PATH, CUDA_*, TORCH_*, OMP_*, ANVIL_*, ...;
// docs/sandbox.md lists them) and no secret word in its name (KEY, TOKEN,
// SECRET, PASSWORD, CREDENTIAL, ...), whatever its prefix.
bool ChildMayInherit(std::string_view name);

// The allowed part of anvil's environment, with `added` on top (added
// entries replace inherited ones and are kept whatever their name: the caller
// chose them); sorted by name, one entry per name.
EnvPairs ChildEnvironment(const EnvPairs& added);

// "NAME=value" strings of `env`, for an exec.
std::vector<std::string> EnvStrings(const EnvPairs& env);

}  // namespace anvil
