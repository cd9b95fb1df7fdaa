#include "cli/model_flags.h"

#include <CLI/CLI.hpp>
#include <chrono>
#include <vector>

#include "backend/torch_info.h"
#include "gen/api_key.h"
#include "gen/endpoint.h"
#include "integrity/candidate_sandbox.h"

namespace anvil {
namespace {

std::chrono::milliseconds Millis(double seconds) {
  return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
}

}  // namespace

void AddModelFlags(CLI::App* cmd, ModelFlags& f, const std::string& timeout_flag) {
  cmd->add_option("--endpoint", f.endpoint,
                  "The server's base URL, e.g. http://localhost:8000/v1 (default $ANVIL_OPENAI_BASE_URL, else "
                  "$OPENAI_BASE_URL)");
  cmd->add_option("--api-key-file", f.api_key_file,
                  "A file holding the key (default $ANVIL_OPENAI_API_KEY, else $OPENAI_API_KEY, else no key)");
  cmd->add_option("--api-key", f.api_key_on_command_line)->group("");  // Only to say why not.
  cmd->add_option("--retries", f.retries, "Retries of 429, 408, 409 and 5xx answers")->capture_default_str();
  cmd->add_option(timeout_flag, f.request_timeout, "Seconds per request to the model, retries included")
      ->capture_default_str();
  cmd->add_option("--unreachable-after", f.unreachable_after,
                  "Seconds a server may refuse connections before anvil gives up (a run stops, resumable)")
      ->capture_default_str();
}

Result<ModelSetup> ToModelSetup(const ModelFlags& f, const std::filesystem::path& cache_dir) {
  if (!f.api_key_on_command_line.empty()) {
    return Status::Error(
        "a key is never taken from the command line (every user of this machine can read it there): set "
        "ANVIL_OPENAI_API_KEY, or pass --api-key-file FILE");
  }
  auto endpoint = ResolveEndpoint(f.endpoint);
  if (!endpoint.ok()) return endpoint.status();
  std::vector<std::filesystem::path> readable;
  if (!f.api_key_file.empty()) {
    auto torch = LoadTorchInfo(cache_dir);
    if (!torch.ok()) return Status::Error("cannot check where --api-key-file is: " + torch.message());
    readable = CandidateReadablePaths(torch.value());
  }
  auto key = ResolveApiKey(f.api_key_file, readable);
  if (!key.ok()) return key.status();
  ModelSetup setup;
  setup.client.endpoint = endpoint.value();
  setup.client.api_key = key.value().value;
  setup.client.request_timeout = Millis(f.request_timeout);
  setup.client.retry.max_retries = f.retries;
  setup.client.retry.unreachable_after = Millis(f.unreachable_after);
  setup.key_source = key.value().source;
  return setup;
}

}  // namespace anvil
