// Who may ask the reward service what (docs/service.md, "Trust"): the client
// and admin tokens read from files (never argv, never logged), the bearer
// token a request carries, compared in constant time, and the headers that
// mark a request as one the service refuses whatever its token: a browser's
// (Origin), a proxied one (Forwarded, X-Forwarded-For, X-Real-IP), or one
// sent to a loopback listener under another name (DNS rebinding). Pure
// functions but LoadToken.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "core/status.h"

namespace anvil {

// A token file's token: its text without trailing whitespace. Error when the
// file cannot be read, holds under 16 characters, holds whitespace inside,
// or can be read by others than its owner (chmod 600 it).
Result<std::string> LoadToken(const std::filesystem::path& file);

// Whether two tokens are equal, in time that does not depend on where they
// differ.
bool SameToken(const std::string& a, const std::string& b);

// The token of an `Authorization: Bearer <token>` header value; "" if none.
std::string BearerToken(const std::string& authorization);

// Whether `host_header` (a Host header: name or address, optional port) names
// this machine's loopback: 127.0.0.1, localhost or [::1].
bool IsLoopbackHostHeader(const std::string& host_header);

}  // namespace anvil
