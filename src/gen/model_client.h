// The model behind a small interface: a chat request in, the server's answer
// or a typed failure out. OpenAiClient (gen/openai_client.h) is the real one;
// tests of the loop use a fake. Implementations must be safe to call from
// several threads at once (the loop keeps --concurrency requests in flight).
#pragma once

#include <map>
#include <optional>
#include <string>

#include "gen/chat.h"

namespace anvil {

// Why a request got no usable answer. Each is the machine's failure, never
// the model's: the loop records it as `server_error` and a rerun asks again.
enum class ModelFailure {
  kNone,
  kUnreachable,  // No connection for RetryPolicy::unreachable_after: the run stops.
  kTimeout,      // No answer within the request's time.
  kHttpError,    // A status that is not 200 (after the retries of retryable ones).
  kBadAnswer,    // A 200 whose body is not a chat completion.
  kTooLarge,     // An answer over the size limit.
};

// "unreachable", "timeout", "http_error", "bad_answer", "too_large", "none".
const char* ModelFailureName(ModelFailure failure);

struct ModelCall {
  std::optional<ChatResponse> response;  // Set when failure == kNone.
  ModelFailure failure = ModelFailure::kNone;
  std::string message;                         // What went wrong, naming the endpoint and what came back.
  int http_status = 0;                         // The last answer's status; 0 when none came.
  std::string body;                            // The last answer's body as it came (the record keeps it raw).
  std::map<std::string, std::string> headers;  // The last answer's recordable headers (gen/endpoint.h).
  int attempts = 0;                            // Requests sent, retries included.
  double seconds = 0;                          // From the first send to the last answer.

  bool ok() const { return failure == ModelFailure::kNone; }
};

class ModelClient {
 public:
  virtual ~ModelClient() = default;
  // Sends `request`, retrying as the client's policy says; never throws.
  virtual ModelCall Complete(const ChatRequest& request) = 0;
};

}  // namespace anvil
