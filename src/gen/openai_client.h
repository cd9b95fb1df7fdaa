// ModelClient over HTTP for any OpenAI-compatible server (vLLM, SGLang,
// llama.cpp, OpenAI): POST {endpoint}/chat/completions with libcurl, one
// connection per call, retries with backoff (gen/retry.h). The key goes only
// into the Authorization header; it is in no message, record or child
// environment. Thread-safe: Complete may run on many threads at once.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

#include "gen/model_client.h"
#include "gen/retry.h"

namespace anvil {

struct OpenAiClientOptions {
  std::string endpoint;  // Base URL, as from ResolveEndpoint ("http://host:8000/v1").
  std::string api_key;   // Empty: no Authorization header.
  // The request's whole time, retries and waits included (default 600 s).
  std::chrono::milliseconds request_timeout{600000};
  std::chrono::milliseconds connect_timeout{10000};
  RetryPolicy retry;
  std::size_t max_answer_bytes = std::size_t{64} << 20;  // Larger answers are kTooLarge.
};

class OpenAiClient : public ModelClient {
 public:
  explicit OpenAiClient(OpenAiClientOptions options);
  ModelCall Complete(const ChatRequest& request) override;

  const OpenAiClientOptions& options() const { return options_; }

 private:
  OpenAiClientOptions options_;
};

}  // namespace anvil
