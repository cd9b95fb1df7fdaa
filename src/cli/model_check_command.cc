// `anvil model-check`: does the model server answer? Sends one chat request
// to the endpoint as `anvil generate` will (same client, key handling,
// retries and limits) and prints what came back: the status, the time, the
// tokens, the finish reason and the start of the answer. Exit 0 when an
// answer came, 1 when the server failed, 2 for bad usage.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "backend/torch_info.h"
#include "cli/commands.h"
#include "core/environment.h"
#include "gen/api_key.h"
#include "gen/endpoint.h"
#include "gen/openai_client.h"
#include "integrity/candidate_sandbox.h"

namespace anvil {
namespace {

struct ModelCheckArgs {
  std::string endpoint;
  std::string model;
  std::string prompt = "Reply with one word: ready";
  std::string api_key_file;
  std::string api_key_on_command_line;  // Refused: argv is visible to every user.
  int max_tokens = 64;
  bool max_completion_tokens = false;
  std::optional<double> temperature;
  std::optional<int64_t> seed;
  double timeout_s = 600;
  int retries = 5;
  double unreachable_after_s = 60;
  std::string cache_dir;
  bool json = false;
};

std::chrono::milliseconds Millis(double seconds) {
  return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
}

// The first `lines` lines of `text`.
std::string Head(const std::string& text, int lines) {
  std::size_t end = 0;
  for (int i = 0; i < lines; ++i) {
    end = text.find('\n', end);
    if (end == std::string::npos) return text;
    ++end;
  }
  return end >= text.size() ? text : text.substr(0, end) + "...";
}

nlohmann::json CallJson(const std::string& endpoint, const std::string& key_source, const std::string& model,
                        const ModelCall& call) {
  nlohmann::json j = {{"endpoint", RecordedEndpoint(endpoint)},
                      {"key", key_source},
                      {"model", model},
                      {"ok", call.ok()},
                      {"failure", ModelFailureName(call.failure)},
                      {"message", call.message},
                      {"http_status", call.http_status},
                      {"attempts", call.attempts},
                      {"seconds", call.seconds},
                      {"headers", call.headers}};
  if (call.response) {
    const ChatResponse& r = *call.response;
    j["answered_as"] = r.model;
    j["finish_reason"] = r.choices.front().finish_reason;
    j["content"] = r.choices.front().content;
    j["refusal"] = r.choices.front().refusal;
    if (r.usage) {
      j["usage"] = {{"prompt_tokens", r.usage->prompt}, {"completion_tokens", r.usage->completion}};
      if (r.usage->reasoning) j["usage"]["reasoning_tokens"] = *r.usage->reasoning;
    }
  }
  return j;
}

void PrintText(const std::string& endpoint, const std::string& key_source, const std::string& model,
               const ModelCall& call) {
  std::printf("endpoint  %s (key: %s)\n", RecordedEndpoint(endpoint).c_str(), key_source.c_str());
  std::printf("model     %s\n", model.c_str());
  std::printf("attempts  %d in %.2f s%s\n", call.attempts, call.seconds,
              call.http_status != 0 ? (", last answer HTTP " + std::to_string(call.http_status)).c_str() : "");
  if (!call.ok()) {
    std::printf("result    FAILED (%s): %s\n", ModelFailureName(call.failure), call.message.c_str());
    return;
  }
  const ChatResponse& r = *call.response;
  const ChatChoice& c = r.choices.front();
  std::printf("answered  as %s, finish_reason %s\n", r.model.empty() ? "(unnamed)" : r.model.c_str(),
              c.finish_reason.empty() ? "(none)" : c.finish_reason.c_str());
  if (r.usage) {
    std::printf("tokens    prompt %lld, completion %lld", static_cast<long long>(r.usage->prompt),
                static_cast<long long>(r.usage->completion));
    if (r.usage->reasoning) std::printf(", reasoning %lld", static_cast<long long>(*r.usage->reasoning));
    std::printf("\n");
  }
  if (!c.refusal.empty()) std::printf("refusal   %s\n", c.refusal.c_str());
  std::printf("content   %s\n", Head(c.content, 8).c_str());
}

int Run(const ModelCheckArgs& a) {
  const char* me = "anvil model-check";
  if (!a.api_key_on_command_line.empty()) {
    std::fprintf(stderr,
                 "%s: a key is never taken from the command line (every user of this machine can read it there): "
                 "set ANVIL_OPENAI_API_KEY, or pass --api-key-file FILE\n",
                 me);
    return kExitUsage;
  }
  auto endpoint = ResolveEndpoint(a.endpoint);
  if (!endpoint.ok()) {
    std::fprintf(stderr, "%s: %s\n", me, endpoint.message().c_str());
    return kExitUsage;
  }
  std::vector<std::filesystem::path> readable;
  if (!a.api_key_file.empty()) {
    auto torch = LoadTorchInfo(a.cache_dir.empty() ? DefaultCacheDir() : std::filesystem::path(a.cache_dir));
    if (!torch.ok()) {
      std::fprintf(stderr, "%s: %s\n", me, torch.message().c_str());
      return kExitFailure;
    }
    readable = CandidateReadablePaths(torch.value());
  }
  auto key = ResolveApiKey(a.api_key_file, readable);
  if (!key.ok()) {
    std::fprintf(stderr, "%s: %s\n", me, key.message().c_str());
    return kExitUsage;
  }
  OpenAiClientOptions options;
  options.endpoint = endpoint.value();
  options.api_key = key.value().value;
  options.request_timeout = Millis(a.timeout_s);
  options.retry.max_retries = a.retries;
  options.retry.unreachable_after = Millis(a.unreachable_after_s);
  OpenAiClient client(options);
  ChatRequest request;
  request.model = a.model;
  request.messages = {{"user", a.prompt}};
  request.sampling.max_tokens = a.max_tokens;
  request.sampling.max_completion_tokens = a.max_completion_tokens;
  request.sampling.temperature = a.temperature;
  request.sampling.seed = a.seed;
  const ModelCall call = client.Complete(request);
  if (a.json) {
    std::printf("%s\n", CallJson(endpoint.value(), key.value().source, a.model, call).dump(2).c_str());
  } else {
    PrintText(endpoint.value(), key.value().source, a.model, call);
  }
  return call.ok() ? kExitOk : kExitFailure;
}

}  // namespace

void RegisterModelCheck(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<ModelCheckArgs>();
  CLI::App* cmd = app.add_subcommand(
      "model-check", "Send one chat request to an OpenAI-compatible model server and show what came back");
  cmd->add_option("--endpoint", args->endpoint,
                  "The server's base URL, e.g. http://localhost:8000/v1 (default $ANVIL_OPENAI_BASE_URL, else "
                  "$OPENAI_BASE_URL)");
  cmd->add_option("--model", args->model, "The model name the server serves")->required();
  cmd->add_option("--prompt", args->prompt, "The user message")->capture_default_str();
  cmd->add_option("--api-key-file", args->api_key_file,
                  "A file holding the key (default $ANVIL_OPENAI_API_KEY, else $OPENAI_API_KEY, else no key)");
  cmd->add_option("--api-key", args->api_key_on_command_line)->group("");  // Only to say why not.
  cmd->add_option("--max-tokens", args->max_tokens, "Completion tokens at most")->capture_default_str();
  cmd->add_flag("--max-completion-tokens", args->max_completion_tokens,
                "Send the limit as max_completion_tokens (OpenAI's newer models) instead of max_tokens");
  cmd->add_option("--temperature", args->temperature, "Sampling temperature (default: the server's)");
  cmd->add_option("--seed", args->seed, "Sampling seed");
  cmd->add_option("--timeout", args->timeout_s, "Seconds for the request, retries included")->capture_default_str();
  cmd->add_option("--retries", args->retries, "Retries of 429, 408, 409 and 5xx answers")->capture_default_str();
  cmd->add_option("--unreachable-after", args->unreachable_after_s,
                  "Seconds a server may refuse connections before anvil gives up")
      ->capture_default_str();
  cmd->add_option("--cache-dir", args->cache_dir, "Cache folder (default $ANVIL_CACHE_DIR or ~/.cache/anvil)");
  cmd->add_flag("--json", args->json, "Print the result as one JSON object");
  cmd->callback([args, &exit_code] { exit_code = Run(*args); });
}

}  // namespace anvil
