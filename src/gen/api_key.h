// The model server's key: from a file (`--api-key-file`), else
// $ANVIL_OPENAI_API_KEY, else $OPENAI_API_KEY; never from the command line
// (other users see argv in ps). No key is fine: requests then carry no
// Authorization header (a local vLLM needs none). A key file that candidate
// code could read is refused. Thread-safe.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "core/status.h"

namespace anvil {

struct ApiKey {
  std::string value;   // Empty: none.
  std::string source;  // "--api-key-file PATH", "ANVIL_OPENAI_API_KEY", "OPENAI_API_KEY" or "none".
};

// `candidate_readable`: the files and folders the candidate sandbox lets
// candidate code read (integrity/candidate_sandbox.h CandidateReadablePaths).
// Errors: the file is missing, unreadable, empty, or inside one of them.
Result<ApiKey> ResolveApiKey(const std::string& key_file, const std::vector<std::filesystem::path>& candidate_readable);

}  // namespace anvil
