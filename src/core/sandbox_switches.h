// The parts of a sandbox policy every sandboxed child shares (candidates,
// compilers): the system folders it reads, and the switches of ANVIL_SANDBOX
// that leave layers out. Pure functions.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "core/sandbox.h"
#include "core/status.h"

namespace anvil {

// Read-only system folders: /usr /bin /sbin /lib* /etc /opt /proc /sys. /dev
// is not among them: /dev/shm holds other jobs' scratch folders (trial data);
// device files are listed one by one.
const std::vector<std::filesystem::path>& SystemReadFolders();

// Applies a switch list like ANVIL_SANDBOX's ("0", "off", "-landlock,-userns");
// false when everything is off. Error on an unknown word.
Result<bool> ApplySandboxSwitches(const std::string& switches, SandboxPolicy& policy);

}  // namespace anvil
