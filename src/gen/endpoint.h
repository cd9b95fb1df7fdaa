// Where model requests go and what of that is written down: the endpoint
// (`--endpoint`, else $ANVIL_OPENAI_BASE_URL, else $OPENAI_BASE_URL), its form
// for the record (no userinfo, no query string: either may hold a key), and
// the response headers worth recording (an allowlist). Thread-safe.
#pragma once

#include <map>
#include <string>

#include "core/status.h"

namespace anvil {

// The base URL ("http://host:8000/v1", no trailing slash). Errors: none
// given anywhere, or not an http(s) URL with a host.
Result<std::string> ResolveEndpoint(const std::string& flag);

// `endpoint` without "user:password@", "?query" and "#fragment".
std::string RecordedEndpoint(const std::string& endpoint);

// The chat completions route under a base URL.
std::string ChatCompletionsUrl(const std::string& endpoint);

// The headers of an answer that may be recorded (names lower-case): the
// content type, request ids, processing time, rate-limit state, retry hints.
std::map<std::string, std::string> RecordedHeaders(const std::map<std::string, std::string>& headers);

}  // namespace anvil
