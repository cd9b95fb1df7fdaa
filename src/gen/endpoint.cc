#include "gen/endpoint.h"

#include <cstdlib>

namespace anvil {
namespace {

constexpr const char* kEndpointVariables[] = {"ANVIL_OPENAI_BASE_URL", "OPENAI_BASE_URL"};

// Exact header names that may be recorded; "x-ratelimit-*" too.
constexpr std::string_view kRecordedHeaders[] = {"content-type",   "date",        "server",
                                                 "x-request-id",   "request-id",  "openai-processing-ms",
                                                 "openai-version", "retry-after", "retry-after-ms"};

}  // namespace

Result<std::string> ResolveEndpoint(const std::string& flag) {
  std::string url = flag;
  for (const char* variable : kEndpointVariables) {
    if (!url.empty()) break;
    if (const char* set = std::getenv(variable); set != nullptr) url = set;
  }
  if (url.empty()) {
    return Status::Error(
        "no model endpoint: pass --endpoint URL (the server's base URL, e.g. http://localhost:8000/v1) or set "
        "ANVIL_OPENAI_BASE_URL");
  }
  while (!url.empty() && url.back() == '/') url.pop_back();
  const auto scheme_end = url.find("://");
  const std::string scheme = scheme_end == std::string::npos ? "" : url.substr(0, scheme_end);
  if ((scheme != "http" && scheme != "https") || scheme_end + 3 >= url.size() || url[scheme_end + 3] == '/') {
    return Status::Error("the endpoint '" + RecordedEndpoint(url) +
                         "' is not an http(s) URL with a host (e.g. http://localhost:8000/v1)");
  }
  return url;
}

std::string RecordedEndpoint(const std::string& endpoint) {
  std::string url = endpoint.substr(0, endpoint.find_first_of("?#"));
  const auto scheme_end = url.find("://");
  const std::size_t host_start = scheme_end == std::string::npos ? 0 : scheme_end + 3;
  const std::size_t host_end = std::min(url.find('/', host_start), url.size());
  const auto at = url.rfind('@', host_end - 1);
  if (at != std::string::npos && at >= host_start && at < host_end) url.erase(host_start, at + 1 - host_start);
  return url;
}

std::string ChatCompletionsUrl(const std::string& endpoint) { return endpoint + "/chat/completions"; }

std::map<std::string, std::string> RecordedHeaders(const std::map<std::string, std::string>& headers) {
  std::map<std::string, std::string> kept;
  for (const auto& [name, value] : headers) {
    bool keep = name.starts_with("x-ratelimit-");
    for (std::string_view allowed : kRecordedHeaders) keep = keep || name == allowed;
    if (keep) kept[name] = value;
  }
  return kept;
}

}  // namespace anvil
