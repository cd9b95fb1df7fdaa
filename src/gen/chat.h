// A chat-completion request and what came back, as plain values: what the
// model loop builds and records, independent of HTTP (gen/openai_client.h
// sends them; gen/chat_json.h maps them to the OpenAI protocol's JSON).
// Copy freely; no shared state.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace anvil {

struct ChatMessage {
  std::string role;  // "system", "user" or "assistant".
  std::string content;
};

// Sampling settings; an unset field is not sent (the server's default holds).
struct SamplingParams {
  std::optional<double> temperature;
  std::optional<double> top_p;
  std::optional<int> max_tokens;
  // Send max_tokens as "max_completion_tokens" (OpenAI's newer models refuse
  // "max_tokens"); default false: vLLM, SGLang and llama.cpp read "max_tokens".
  bool max_completion_tokens = false;
  std::optional<int64_t> seed;
  std::vector<std::string> stop;
  int n = 1;                        // Choices per request.
  bool logprobs = false;            // Per-token log-probs of the sampled tokens.
  std::optional<int> top_logprobs;  // Alternatives per token, with logprobs.
  bool return_token_ids = false;    // vLLM's choices[].token_ids.
};

struct ChatRequest {
  std::string model;
  std::vector<ChatMessage> messages;
  SamplingParams sampling;
};

struct TokenLogprob {
  std::string token;
  double logprob = 0;
};

struct ChatChoice {
  std::string content;    // The message's text ("" when none).
  std::string reasoning;  // vLLM's reasoning-parser output, or "reasoning_content".
  std::string refusal;    // message.refusal, when the model refused.
  // "stop", "length" (truncated), "content_filter", "tool_calls", ... or ""
  // when the server gave none.
  std::string finish_reason;
  std::vector<int64_t> token_ids;      // With return_token_ids.
  std::vector<TokenLogprob> logprobs;  // With logprobs.
};

struct TokenUsage {
  int64_t prompt = 0;
  int64_t completion = 0;
  std::optional<int64_t> reasoning;  // completion_tokens_details.reasoning_tokens, where reported.
};

struct ChatResponse {
  std::string id;     // The server's response id.
  std::string model;  // The model that answered, as the server names it.
  std::vector<ChatChoice> choices;
  std::optional<TokenUsage> usage;  // Absent when the server reports none.
};

}  // namespace anvil
