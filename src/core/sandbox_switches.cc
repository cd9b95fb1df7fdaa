#include "core/sandbox_switches.h"

namespace anvil {

const std::vector<std::filesystem::path>& SystemReadFolders() {
  static const std::vector<std::filesystem::path> folders = {"/usr",   "/bin", "/sbin", "/lib",  "/lib32",
                                                             "/lib64", "/etc", "/opt",  "/proc", "/sys"};
  return folders;
}

Result<bool> ApplySandboxSwitches(const std::string& switches, SandboxPolicy& policy) {
  if (switches == "0" || switches == "off") return false;
  std::size_t start = 0;
  while (start <= switches.size()) {
    std::size_t end = switches.find(',', start);
    if (end == std::string::npos) end = switches.size();
    const std::string word = switches.substr(start, end - start);
    start = end + 1;
    if (word.empty() || word == "1" || word == "on") continue;
    if (word == "-landlock") {
      policy.confine_files = false;
    } else if (word == "-seccomp") {
      policy.forbid_syscalls = false;
    } else if (word == "-userns") {
      policy.user_namespace = false;
    } else if (word == "-netns") {
      policy.network_namespace = false;
    } else if (word == "-rofs") {
      policy.read_only_mounts = false;
    } else if (word == "-root") {
      policy.own_root = false;
    } else if (word == "-signals") {
      policy.scope_signals = false;
    } else {
      return Status::Error(
          "ANVIL_SANDBOX: unknown switch '" + word +
          "' (use 0, or a comma list of -landlock, -signals, -seccomp, -userns, -netns, -rofs, -root)");
    }
  }
  return true;
}

}  // namespace anvil
