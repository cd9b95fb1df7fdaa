// A verdict policy: the named set of rules that decides what is correct and
// legal (docs/rules.md). Only "musacoder" exists yet; a verdict records the
// policy it was judged under, with every setting of the run that changed one
// of the policy's own ("overrides": --atol, --rtol). The policy is part of
// every key a verdict depends on (the --out resume key, the prepared task's,
// the verdict cache's). Plain value.
#pragma once

#include <map>
#include <string>

namespace anvil {

struct Policy {
  std::string name = "musacoder";
  int version = 1;
  std::map<std::string, double> overrides;  // "atol", "rtol".

  // "musacoder/1": what a key holds of it (overrides enter keys as options).
  std::string Id() const { return name + "/" + std::to_string(version); }
};

}  // namespace anvil
