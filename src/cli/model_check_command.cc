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

#include "cli/commands.h"
#include "cli/model_flags.h"
#include "core/environment.h"
#include "gen/endpoint.h"
#include "gen/openai_client.h"

namespace anvil {
namespace {

struct ModelCheckArgs : ModelFlags {
  std::string model;
  std::string prompt = "Reply with one word: ready";
  int max_tokens = 64;
  bool max_completion_tokens = false;
  std::optional<double> temperature;
  std::optional<int64_t> seed;
  std::string cache_dir;
  bool json = false;
};

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
  auto setup = ToModelSetup(a, a.cache_dir.empty() ? DefaultCacheDir() : std::filesystem::path(a.cache_dir));
  if (!setup.ok()) {
    std::fprintf(stderr, "anvil model-check: %s\n", setup.message().c_str());
    return kExitUsage;
  }
  OpenAiClient client(setup.value().client);
  ChatRequest request;
  request.model = a.model;
  request.messages = {{"user", a.prompt}};
  request.sampling.max_tokens = a.max_tokens;
  request.sampling.max_completion_tokens = a.max_completion_tokens;
  request.sampling.temperature = a.temperature;
  request.sampling.seed = a.seed;
  const ModelCall call = client.Complete(request);
  if (a.json) {
    std::printf("%s\n",
                CallJson(setup.value().client.endpoint, setup.value().key_source, a.model, call).dump(2).c_str());
  } else {
    PrintText(setup.value().client.endpoint, setup.value().key_source, a.model, call);
  }
  return call.ok() ? kExitOk : kExitFailure;
}

}  // namespace

void RegisterModelCheck(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<ModelCheckArgs>();
  CLI::App* cmd = app.add_subcommand(
      "model-check", "Send one chat request to an OpenAI-compatible model server and show what came back");
  cmd->add_option("--model", args->model, "The model name the server serves")->required();
  cmd->add_option("--prompt", args->prompt, "The user message")->capture_default_str();
  cmd->add_option("--max-tokens", args->max_tokens, "Completion tokens at most")->capture_default_str();
  cmd->add_flag("--max-completion-tokens", args->max_completion_tokens,
                "Send the limit as max_completion_tokens (OpenAI's newer models) instead of max_tokens");
  cmd->add_option("--temperature", args->temperature, "Sampling temperature (default: the server's)");
  cmd->add_option("--seed", args->seed, "Sampling seed");
  AddModelFlags(cmd, *args, "--timeout");
  cmd->add_option("--cache-dir", args->cache_dir, "Cache folder (default $ANVIL_CACHE_DIR or ~/.cache/anvil)");
  cmd->add_flag("--json", args->json, "Print the result as one JSON object");
  cmd->callback([args, &exit_code] { exit_code = Run(*args); });
}

}  // namespace anvil
