#include "gen/retry.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <ctime>

namespace anvil {
namespace {

// A non-negative decimal number ("1.5"), or nullopt.
std::optional<double> Number(const std::string& text) {
  if (text.empty() || !std::isdigit(static_cast<unsigned char>(text.front()))) return std::nullopt;
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (...) {
    return std::nullopt;
  }
  while (used < text.size() && std::isspace(static_cast<unsigned char>(text[used]))) ++used;
  if (used != text.size() || !std::isfinite(value) || value < 0) return std::nullopt;
  return value;
}

// Seconds from now until an HTTP date ("Wed, 21 Oct 2015 07:28:00 GMT"), at
// least 0; nullopt when it does not read as one.
std::optional<double> SecondsUntilHttpDate(const std::string& text) {
  std::tm tm = {};
  const char* end = strptime(text.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &tm);
  if (end == nullptr) return std::nullopt;
  const std::time_t when = timegm(&tm);
  return std::max(0.0, std::difftime(when, std::time(nullptr)));
}

std::chrono::milliseconds Millis(double ms) {
  return std::chrono::milliseconds(static_cast<int64_t>(std::min(ms, 1e12)));
}

}  // namespace

bool RetryableStatus(int http_status) {
  return http_status == 408 || http_status == 409 || http_status == 429 || http_status >= 500;
}

std::optional<std::chrono::milliseconds> ServerRetryDelay(const std::map<std::string, std::string>& headers) {
  if (const auto ms = headers.find("retry-after-ms"); ms != headers.end()) {
    if (const auto v = Number(ms->second)) return Millis(*v);
  }
  const auto after = headers.find("retry-after");
  if (after == headers.end()) return std::nullopt;
  if (const auto seconds = Number(after->second)) return Millis(*seconds * 1000);
  if (const auto seconds = SecondsUntilHttpDate(after->second)) return Millis(*seconds * 1000);
  return std::nullopt;
}

std::chrono::milliseconds RetryDelay(const RetryPolicy& policy, int retry,
                                     std::optional<std::chrono::milliseconds> server_delay, double jitter01) {
  if (server_delay) return *server_delay;
  const double base = static_cast<double>(policy.first_delay.count()) * std::pow(2.0, std::min(retry, 30));
  const double capped = std::min(base, static_cast<double>(policy.max_delay.count()));
  return Millis(capped * (1.0 - 0.25 * std::clamp(jitter01, 0.0, 1.0)));
}

}  // namespace anvil
