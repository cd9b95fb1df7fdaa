// One piece of legality evidence: which rule fired, how much it weighs
// ("cheat" changes the verdict, "evidence" is only recorded), where, and why.
// Plain value.
#pragma once

#include <string>

namespace anvil {

struct RuleHit {
  std::string rule;      // e.g. "cpp.aten_compute", "py.torch_compute".
  std::string severity;  // "cheat" | "evidence"
  int line = 0;          // 1-based; 0 when unknown.
  int column = 0;        // 1-based, in bytes; 0 when unknown.
  std::string excerpt;   // The trimmed source line.
  std::string message;
  std::string source;  // Which source: "cpp_sources[0]", a file name, ...
};

}  // namespace anvil
