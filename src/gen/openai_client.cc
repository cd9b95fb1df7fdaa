#include "gen/openai_client.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <memory>
#include <mutex>
#include <random>
#include <thread>
#include <utility>

#include "gen/chat_json.h"
#include "gen/endpoint.h"

namespace anvil {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// One HTTP exchange: what came back, or how it failed.
struct Exchange {
  CURLcode code = CURLE_OK;
  long status = 0;
  std::string body;
  std::map<std::string, std::string> headers;  // Names lower-case.
  std::size_t max_bytes = 0;
  bool too_large = false;
  char error[CURL_ERROR_SIZE] = {};
};

std::size_t OnBody(char* data, std::size_t size, std::size_t count, void* user) {
  auto* ex = static_cast<Exchange*>(user);
  const std::size_t bytes = size * count;
  if (ex->body.size() + bytes > ex->max_bytes) {
    ex->too_large = true;
    return 0;  // Ends the transfer.
  }
  ex->body.append(data, bytes);
  return bytes;
}

std::size_t OnHeader(char* data, std::size_t size, std::size_t count, void* user) {
  auto* ex = static_cast<Exchange*>(user);
  const std::size_t bytes = size * count;
  std::string line(data, bytes);
  if (line.starts_with("HTTP/")) ex->headers.clear();  // A new response (after a 100 Continue).
  const auto colon = line.find(':');
  if (colon != std::string::npos) {
    std::string name = line.substr(0, colon);
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    std::string value = line.substr(colon + 1);
    const auto first = value.find_first_not_of(" \t");
    const auto last = value.find_last_not_of(" \t\r\n");
    ex->headers[name] = first == std::string::npos ? "" : value.substr(first, last - first + 1);
  }
  return bytes;
}

struct CurlDeleter {
  void operator()(CURL* c) const { curl_easy_cleanup(c); }
};
struct SlistDeleter {
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};

Exchange Post(const std::string& url, const std::string& body, const std::string& api_key, milliseconds timeout,
              milliseconds connect_timeout, std::size_t max_bytes) {
  static std::once_flag init;
  std::call_once(init, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  Exchange ex;
  ex.max_bytes = max_bytes;
  std::unique_ptr<CURL, CurlDeleter> curl(curl_easy_init());
  if (!curl) {
    ex.code = CURLE_FAILED_INIT;
    return ex;
  }
  std::unique_ptr<curl_slist, SlistDeleter> headers;
  auto add = [&](const std::string& h) { headers.reset(curl_slist_append(headers.release(), h.c_str())); };
  add("Content-Type: application/json");
  add("Accept: application/json");
  add("Expect:");  // No 100 Continue round trip for large prompts.
  if (!api_key.empty()) add("Authorization: Bearer " + api_key);
  CURL* c = curl.get();
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_POST, 1L);
  curl_easy_setopt(c, CURLOPT_POSTFIELDS, body.data());
  curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers.get());
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, OnBody);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &ex);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, OnHeader);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &ex);
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(std::max<int64_t>(1, timeout.count())));
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(std::max<int64_t>(1, connect_timeout.count())));
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);  // Threads: no SIGALRM for timeouts.
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, ex.error);
  curl_easy_setopt(c, CURLOPT_USERAGENT, "anvil/" ANVIL_VERSION);
  curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "");  // Whatever libcurl can decode.
  curl_easy_setopt(c, CURLOPT_TCP_KEEPALIVE, 1L);
  ex.code = curl_easy_perform(c);
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &ex.status);
  return ex;
}

// Failures to reach the server at all (or to get any answer from it): asked
// again until the server has been unreachable for the policy's time.
bool ConnectionFailure(CURLcode code) {
  switch (code) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_SSL_CONNECT_ERROR:
      return true;
    default:
      return false;
  }
}

std::string CurlProblem(const Exchange& ex) { return ex.error[0] != '\0' ? ex.error : curl_easy_strerror(ex.code); }

std::string Seconds(milliseconds ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g s", static_cast<double>(ms.count()) / 1000.0);
  return buf;
}

// What a non-200 answer says, with a hint for the usual causes.
std::string HttpProblem(const std::string& endpoint, long status, const std::string& body) {
  std::string said;
  auto parsed = ParseChatResponse(body);  // Reads {"error": {"message": ...}} bodies.
  said = parsed.ok() ? BodyExcerpt(body) : parsed.message();
  const std::string prefix = "the server answered with an error: ";
  if (said.starts_with(prefix)) said = said.substr(prefix.size());
  std::string text = endpoint + " answered HTTP " + std::to_string(status) + ": " + said;
  if (status == 401 || status == 403) {
    text += " (check the key: ANVIL_OPENAI_API_KEY, OPENAI_API_KEY or --api-key-file)";
  } else if (status == 404) {
    text += " (check that --endpoint is the server's base URL, ending in /v1, and that it serves --model)";
  }
  return text;
}

double Jitter() {
  thread_local std::mt19937_64 rng(std::random_device{}());
  return std::uniform_real_distribution<double>(0.0, 1.0)(rng);
}

}  // namespace

const char* ModelFailureName(ModelFailure failure) {
  switch (failure) {
    case ModelFailure::kNone:
      return "none";
    case ModelFailure::kUnreachable:
      return "unreachable";
    case ModelFailure::kTimeout:
      return "timeout";
    case ModelFailure::kHttpError:
      return "http_error";
    case ModelFailure::kBadAnswer:
      return "bad_answer";
    case ModelFailure::kTooLarge:
      return "too_large";
  }
  return "none";
}

OpenAiClient::OpenAiClient(OpenAiClientOptions options) : options_(std::move(options)) {}

ModelCall OpenAiClient::Complete(const ChatRequest& request) {
  const std::string url = ChatCompletionsUrl(options_.endpoint);
  const std::string shown = RecordedEndpoint(options_.endpoint);
  const std::string body = ChatRequestBody(request);
  const RetryPolicy& policy = options_.retry;
  const auto start = Clock::now();
  const auto deadline = start + options_.request_timeout;
  ModelCall call;
  auto fail = [&](ModelFailure failure, std::string message) {
    call.failure = failure;
    call.message = std::move(message);
    call.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    return call;
  };
  auto wait = [&](milliseconds ms) {
    std::this_thread::sleep_for(std::min<Clock::duration>(ms, deadline - Clock::now()));
  };
  int retries = 0, reconnects = 0;
  Clock::time_point unreachable_since{};  // Of the current run of failed connections.
  bool unreachable = false;
  while (true) {
    const auto now = Clock::now();
    if (now >= deadline) {
      return fail(ModelFailure::kTimeout, "no answer from " + shown + " within " + Seconds(options_.request_timeout) +
                                              " (" + std::to_string(call.attempts) + " attempts)");
    }
    const auto left = std::chrono::duration_cast<milliseconds>(deadline - now);
    Exchange ex =
        Post(url, body, options_.api_key, left, std::min(options_.connect_timeout, left), options_.max_answer_bytes);
    ++call.attempts;
    if (ex.too_large) {
      return fail(ModelFailure::kTooLarge,
                  shown + " sent an answer larger than " + std::to_string(options_.max_answer_bytes >> 20) + " MiB");
    }
    if (ex.code != CURLE_OK) {
      const bool answer_timed_out = ex.code == CURLE_OPERATION_TIMEDOUT && Clock::now() >= deadline;
      if (answer_timed_out) {
        return fail(ModelFailure::kTimeout, "no answer from " + shown + " within " + Seconds(options_.request_timeout) +
                                                " (" + std::to_string(call.attempts) + " attempts)");
      }
      if (!ConnectionFailure(ex.code) && ex.code != CURLE_OPERATION_TIMEDOUT) {
        return fail(ModelFailure::kUnreachable, "cannot talk to " + shown + ": " + CurlProblem(ex));
      }
      if (!unreachable) unreachable_since = now;
      unreachable = true;
      if (Clock::now() - unreachable_since >= policy.unreachable_after) {
        return fail(ModelFailure::kUnreachable, "cannot reach " + shown + " for " + Seconds(policy.unreachable_after) +
                                                    " (" + CurlProblem(ex) +
                                                    "): is the server up, and is --endpoint its base URL?");
      }
      const auto until_given_up =
          std::chrono::duration_cast<milliseconds>(unreachable_since + policy.unreachable_after - Clock::now());
      wait(std::min(RetryDelay(policy, std::min(reconnects++, 4), std::nullopt, Jitter()), until_given_up));
      continue;
    }
    unreachable = false;
    reconnects = 0;
    call.http_status = static_cast<int>(ex.status);
    call.body = std::move(ex.body);
    call.headers = RecordedHeaders(ex.headers);
    if (ex.status >= 200 && ex.status < 300) {
      auto parsed = ParseChatResponse(call.body);
      if (!parsed.ok()) return fail(ModelFailure::kBadAnswer, shown + ": " + parsed.message());
      call.response = std::move(parsed).value();
      call.seconds = std::chrono::duration<double>(Clock::now() - start).count();
      return call;
    }
    if (!RetryableStatus(call.http_status) || retries >= policy.max_retries) {
      std::string message = HttpProblem(shown, ex.status, call.body);
      if (retries > 0) message += " (after " + std::to_string(retries) + " retries)";
      return fail(ModelFailure::kHttpError, message);
    }
    const auto server_delay = ServerRetryDelay(ex.headers);
    const milliseconds delay = RetryDelay(policy, retries++, server_delay, Jitter());
    if (Clock::now() + delay >= deadline) {
      return fail(ModelFailure::kHttpError, HttpProblem(shown, ex.status, call.body) + "; waiting " + Seconds(delay) +
                                                " more would pass the request's time limit of " +
                                                Seconds(options_.request_timeout));
    }
    wait(delay);
  }
}

}  // namespace anvil
