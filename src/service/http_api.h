// The reward service's HTTP/JSON API (docs/service.md, docs/openapi.json):
// routes, status codes, who may do what, over service/http_server.h (which
// bounds every connection). A failure inside a handler is a 500 with a JSON
// error, and the server goes on.
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "core/status.h"
#include "service/evaluate_request.h"
#include "service/evaluation_service.h"
#include "service/service_metrics.h"

namespace anvil {

class HttpServer;

struct ApiOptions {
  std::string host = "127.0.0.1";
  int port = 8000;               // 0: any free port (Listening() says which).
  int max_connections = 1024;    // Connections open at once (as many workers); beyond: 503.
  int max_sync = 512;            // /v1/evaluate calls waiting for a verdict at once; beyond: 429.
  std::size_t max_batch = 1024;  // Jobs in one POST /v1/jobs, ids in one GET /v1/jobs.
  double max_wait_s = 60;        // A long-poll's `wait`.
  std::size_t max_body_bytes = std::size_t{4} << 20;
  double request_timeout_s = 10;  // From a request's first byte to its last (slow clients get 408).
  RequestLimits limits;
  // Tokens ("" for none). With a client token, /v1/ requests need a bearer
  // token; the admin token also registers tasks and sends task text to a
  // listener beyond loopback.
  std::string client_token, admin_token;
  // Why task text (task_source) is refused on this machine whoever sends it;
  // "" when it is not (the candidate sandbox has its network namespace and
  // seccomp).
  std::string task_text_refused;
};

// Whether `host` is a loopback address (127.0.0.0/8, ::1, localhost): the only
// listeners that take task text without the admin token.
bool IsLoopbackHost(const std::string& host);

class HttpApi {
 public:
  // `metrics` counts the requests; the service's verdicts are counted by
  // whoever started it (EvaluationService::OnVerdict).
  HttpApi(EvaluationService& service, ServiceMetrics& metrics, ApiOptions options);
  ~HttpApi();
  HttpApi(const HttpApi&) = delete;
  HttpApi& operator=(const HttpApi&) = delete;

  // Binds the listener; the port it got (for port 0), or why not.
  Result<int> Bind();
  // Serves until Stop (from another thread or a signal's thread); returns
  // once the requests in flight have their answers.
  void Serve();
  void Stop();
  // /readyz answers 503 between these (the Python workers' start-up):
  // requests are taken meanwhile, but wait for the workers.
  void WorkersStarting() { workers_ready_ = false; }
  void WorkersReady() { workers_ready_ = true; }

 private:
  void Routes();

  EvaluationService& service_;
  const ApiOptions options_;
  ServiceMetrics& metrics_;
  std::atomic<int> sync_waiting_{0};
  std::atomic<bool> workers_ready_{true};
  std::unique_ptr<HttpServer> server_;
};

}  // namespace anvil
