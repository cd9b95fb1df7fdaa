// The OpenAI protocol's JSON for chat completions: a ChatRequest as the body
// of POST {endpoint}/chat/completions, and the body that comes back as a
// ChatResponse. Parsing never throws: a body that is not a chat completion is
// an error naming what came back. Thread-safe (pure functions).
#pragma once

#include <string>

#include "core/status.h"
#include "gen/chat.h"

namespace anvil {

// The request body (compact JSON).
std::string ChatRequestBody(const ChatRequest& request);

// The response body of a 200 answer. Errors: not JSON, JSON that is not an
// object, an {"error": ...} object, no "choices" array, a choice without a
// message; each message quotes the start of what came back.
Result<ChatResponse> ParseChatResponse(const std::string& body);

// The start of `body` for a message: at most `max_chars` characters on one
// line, quoted, control characters shown as spaces and other bytes past ASCII
// as '?', "..." when cut; "(empty)" for "".
std::string BodyExcerpt(const std::string& body, std::size_t max_chars = 200);

}  // namespace anvil
