// When and how long the model client waits before it asks again: which
// answers are worth a retry (429, 408, 409, 5xx, a dropped or refused
// connection, a timeout), the delay (exponential backoff with jitter, or the
// server's Retry-After when it names one), and how long a server may stay
// unreachable before the run stops. Pure functions; thread-safe.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>

namespace anvil {

struct RetryPolicy {
  int max_retries = 5;  // Retries of a retryable answer (429, 5xx, timeout), per request.
  std::chrono::milliseconds first_delay{500};
  std::chrono::milliseconds max_delay{8000};
  // A server that refuses or drops connections is asked again, whatever
  // max_retries, until it has been unreachable this long: then the run stops
  // (resumable) rather than record failures that are the machine's.
  std::chrono::milliseconds unreachable_after{60000};
};

// Whether an HTTP status is worth asking again (408, 409, 429, >= 500).
bool RetryableStatus(int http_status);

// The delay the server asks for: "retry-after-ms" (milliseconds), else
// "retry-after" (seconds, or an HTTP date); header names lower-case. nullopt
// when neither is there or readable, or the value is negative.
std::optional<std::chrono::milliseconds> ServerRetryDelay(const std::map<std::string, std::string>& headers);

// The wait before retry number `retry` (0 = the first retry): the server's
// delay when it gave one, else min(first_delay * 2^retry, max_delay) less up
// to a quarter of it (`jitter01` in [0, 1) picks how much).
std::chrono::milliseconds RetryDelay(const RetryPolicy& policy, int retry,
                                     std::optional<std::chrono::milliseconds> server_delay, double jitter01);

}  // namespace anvil
