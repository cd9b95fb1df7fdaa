// The model-server flags `anvil generate` and `anvil model-check` share:
// registered once on each command, turned once into the client's options
// (endpoint, key, retries, time limits).
#pragma once

#include <filesystem>
#include <string>

#include "core/status.h"
#include "gen/openai_client.h"

namespace CLI {
class App;
}  // namespace CLI

namespace anvil {

struct ModelFlags {
  std::string endpoint;
  std::string api_key_file;
  std::string api_key_on_command_line;  // Refused: argv is visible to every user of the machine.
  int retries = 5;
  double request_timeout = 600;
  double unreachable_after = 60;
};

// `timeout_flag`: the name of the request-timeout option (model-check's is
// --timeout; generate's --timeout is the candidates' own deadline).
void AddModelFlags(CLI::App* cmd, ModelFlags& flags, const std::string& timeout_flag);

struct ModelSetup {
  OpenAiClientOptions client;
  std::string key_source;  // ApiKey::source: where the key came from, never the key.
};

// The client's options: the endpoint resolved, the key read (a key file is
// checked against what candidate code may read, which needs the venv's torch:
// `cache_dir` holds its probe). Errors are the user's to fix (exit 2).
Result<ModelSetup> ToModelSetup(const ModelFlags& flags, const std::filesystem::path& cache_dir);

}  // namespace anvil
