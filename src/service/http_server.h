// A small HTTP/1.1 server for the reward service, with the bounds a service
// that trainers call must hold: one thread reads every connection's request
// (poll, never a thread per idle or slow client) and hands a request to a
// worker only once it is whole; a request must arrive whole within a deadline
// (a client that trickles it, slowloris, gets 408 and is closed); headers and
// body have size limits; connections past the limit get 503 at once. Workers
// run the handlers (which may wait: long-polls, synchronous verdicts) and
// write the answers; keep-alive connections go back to the reader. What it
// speaks: Content-Length bodies (chunked requests get 411), `Expect:
// 100-continue`, keep-alive (HTTP/1.1) and close (HTTP/1.0, `Connection:
// close`). Handlers never throw into it: an exception is a 500.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"

namespace anvil {

struct HttpRequest {
  std::string method;                          // "GET", ...
  std::string path;                            // Without the query string, percent-decoded.
  std::map<std::string, std::string> params;   // The query string, decoded.
  std::map<std::string, std::string> headers;  // Names in lower case; a repeated one keeps its last value.
  std::string body;
  std::vector<std::string> path_params;  // What the route's {id} segments matched.

  bool has_header(const std::string& lower_name) const { return headers.count(lower_name) > 0; }
  std::string header(const std::string& lower_name) const;
  std::string param(const std::string& name) const;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // Beyond Content-Type/Length and Connection.
  void set_header(const std::string& name, const std::string& value) { headers.emplace_back(name, value); }
};

using HttpHandler = std::function<void(const HttpRequest&, HttpResponse&)>;

struct HttpServerOptions {
  std::string host = "127.0.0.1";
  int port = 0;                             // 0: any free port.
  int max_connections = 1024;               // Open at once; also the number of workers.
  std::size_t max_header_bytes = 64 << 10;  // A long-poll of 1,024 job ids is ~35 KiB.
  std::size_t max_body_bytes = 4 << 20;
  std::chrono::milliseconds request_deadline{10000};  // From a request's first byte to its last.
  std::chrono::milliseconds idle_timeout{5000};       // A keep-alive connection with no request begun.
  std::chrono::milliseconds write_timeout{10000};     // Writing one answer.
  // The body of an answer the server makes itself (404, 408, 413, ...).
  std::function<std::string(int status, const std::string& message)> error_body;
};

class HttpServer {
 public:
  explicit HttpServer(HttpServerOptions options);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // `pattern` is a path whose segments may be `{name}` (matching
  // [A-Za-z0-9_-]+, in HttpRequest::path_params). Before Bind.
  void Route(const std::string& method, const std::string& pattern, HttpHandler handler);
  // Listens; the port it got, or why not.
  Result<int> Bind();
  // Serves until Stop; returns once every request taken has its answer.
  void Serve();
  // Stops taking connections and requests (thread-safe; from a signal's
  // thread too).
  void Stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Percent-decoding ('+' stays '+'); malformed escapes are kept as they are.
std::string PercentDecode(const std::string& text);

}  // namespace anvil
