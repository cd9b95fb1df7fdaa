#include "service/http_api.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "service/auth.h"
#include "service/http_server.h"

namespace anvil {
namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

double Since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

void SetContent(HttpResponse& res, std::string body, const char* type) {
  res.body = std::move(body);
  res.content_type = type;
}

void Error(HttpResponse& res, const RequestError& e) {
  res.status = e.http_status;
  SetContent(res, RequestErrorJson(e), "application/json");
}

// Whether the request says its body is JSON ("application/json", with or
// without parameters such as charset).
bool IsJson(const HttpRequest& req) {
  const std::string type = req.header("content-type");
  return type.rfind("application/json", 0) == 0 && (type.size() == 16 || type[16] == ';' || type[16] == ' ');
}

// A job as the API shows it: {"job_id", "state", "verdict"?}.
std::string JobJson(const std::string& id, const ServiceJob::Snapshot& s) {
  std::string out = "{\"job_id\":" + json(id).dump() + ",\"state\":\"" + JobStateName(s.state) + "\"";
  if (!s.verdict.empty()) out += ",\"verdict\":" + s.verdict;
  return out + "}";
}

bool Finished(const ServiceJob::Snapshot& s) { return s.state == JobState::kDone || s.state == JobState::kCancelled; }

// A verdict's status as a small integer (python/anvil_client's STATUS_CODES).
int StatusCode(const std::string& status) {
  static const char* const names[] = {"pass",  "compile_error", "runtime_error", "timeout",   "wrong_answer",
                                      "cheat", "infra_error",   "no_code",       "truncated", "refused"};
  for (int i = 0; i < 10; ++i) {
    if (status == names[i]) return i;
  }
  return 6;
}

// One sample's flat answer for a trainer (docs/service.md, "verl"): from a
// verdict, a model's own outcome (no_code, ...), or neither (no verdict in
// time, or the service too busy: flagged as the machine's, score 0).
json SampleResult(const json* verdict, const std::string& outcome) {
  if (verdict != nullptr) {
    const std::string status = verdict->value("status", "infra_error");
    json perf = verdict->contains("gates") ? (*verdict)["gates"].value("perf", json::object()) : json::object();
    const json speedup = perf.is_object() ? perf.value("speedup_eager", json()) : json();
    const json reward = verdict->value("reward", json());
    const json q = verdict->value("correctness_rate", json());
    return {{"score", reward.is_number() ? reward.get<double>() : 0.0},
            {"anvil_status_code", StatusCode(status)},
            {"anvil_q", q.is_number() ? q.get<double>() : 0.0},
            {"anvil_speedup", speedup.is_number() ? speedup : json()},
            {"anvil_infra_error", status == "infra_error" ? 1 : 0},
            {"anvil_cached", verdict->value("cached", false) ? 1 : 0}};
  }
  if (!outcome.empty()) {
    return {{"score", -1.0},          {"anvil_status_code", StatusCode(outcome)},
            {"anvil_q", 0.0},         {"anvil_speedup", nullptr},
            {"anvil_infra_error", 0}, {"anvil_cached", 0}};
  }
  return {{"score", 0.0},           {"anvil_status_code", StatusCode("infra_error")},
          {"anvil_q", 0.0},         {"anvil_speedup", nullptr},
          {"anvil_infra_error", 1}, {"anvil_cached", 0}};
}

// What a request may do: its bearer token's role.
enum class Role { kAnonymous, kClient, kAdmin };

}  // namespace

bool IsLoopbackHost(const std::string& host) {
  return host == "localhost" || host == "::1" || host == "[::1]" || host.rfind("127.", 0) == 0;
}

HttpApi::HttpApi(EvaluationService& service, ServiceMetrics& metrics, ApiOptions options)
    : service_(service), options_(std::move(options)), metrics_(metrics) {
  HttpServerOptions o;
  o.host = options_.host;
  o.port = options_.port;
  o.max_connections = options_.max_connections;
  o.max_body_bytes = options_.max_body_bytes;
  o.request_deadline = std::chrono::milliseconds(static_cast<int64_t>(options_.request_timeout_s * 1000));
  o.error_body = [](int status, const std::string& message) {
    return RequestErrorJson(RequestError{status, "", message});
  };
  server_ = std::make_unique<HttpServer>(std::move(o));
  Routes();
}

HttpApi::~HttpApi() = default;

Result<int> HttpApi::Bind() { return server_->Bind(); }

void HttpApi::Serve() { server_->Serve(); }

void HttpApi::Stop() { server_->Stop(); }

void HttpApi::Routes() {
  HttpServer& s = *server_;
  // Each route's answer is counted with its code.
  auto counted = [this](const char* route, auto handler) {
    return [this, route, handler](const HttpRequest& req, HttpResponse& res) {
      const auto start = Clock::now();
      handler(req, res);
      metrics_.CountRequest(route, res.status, Since(start));
    };
  };
  // The checks every request body goes through, then the trust rule: task
  // code runs outside the candidate sandbox, as the reference does, so it is
  // trusted; trust follows the listener's address, never the peer's.

  // `wait` of a long-poll, in seconds (0 when absent).
  auto wait_of = [this](const HttpRequest& req, double& wait) -> std::optional<RequestError> {
    wait = 0;
    if (req.params.count("wait") == 0) return std::nullopt;
    const std::string text = req.param("wait");
    char* end = nullptr;
    wait = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || !(wait >= 0) || wait > options_.max_wait_s) {
      return RequestError{
          400, "wait",
          "must be a number of seconds from 0 to " + std::to_string(static_cast<int>(options_.max_wait_s))};
    }
    return std::nullopt;
  };

  // Every /v1/ request: refused whatever its token when a browser, a proxy
  // or a rebound name sent it; else its role, or 401 for a wrong or missing
  // token where one is needed.
  // `path_token`: the compatibility endpoints' token, in the path (those
  // trainers send no headers).
  auto admit = [this](const HttpRequest& req, Role& role,
                      const std::string& path_token = "") -> std::optional<RequestError> {
    if (req.has_header("origin")) {
      return RequestError{403, "",
                          "a request with an Origin header (a browser's) is refused: call the service from a "
                          "program"};
    }
    for (const auto& [lower, name] :
         {std::pair{"forwarded", "Forwarded"}, std::pair{"x-forwarded-for", "X-Forwarded-For"},
          std::pair{"x-real-ip", "X-Real-IP"}}) {
      if (req.has_header(lower)) {
        return RequestError{403, "",
                            std::string("a proxied request (") + name +
                                ") is refused: trust follows the listener's address, which a proxy hides"};
      }
    }
    if (IsLoopbackHost(options_.host) && req.has_header("host") && !IsLoopbackHostHeader(req.header("host"))) {
      return RequestError{
          403, "",
          "Host " + req.header("host") + " is not a name of this loopback listener (127.0.0.1, localhost, [::1])"};
    }
    const std::string bearer = path_token.empty() ? BearerToken(req.header("authorization")) : path_token;
    role = Role::kAnonymous;
    if (!options_.admin_token.empty() && !bearer.empty() && SameToken(bearer, options_.admin_token)) {
      role = Role::kAdmin;
    } else if (!options_.client_token.empty() && !bearer.empty() && SameToken(bearer, options_.client_token)) {
      role = Role::kClient;
    } else if (!bearer.empty() || (path_token.empty() && req.has_header("authorization"))) {
      return RequestError{401, "", "the token is not one of this service's"};
    } else if (!options_.client_token.empty()) {
      return RequestError{401, "", "send the client token: Authorization: Bearer <token>"};
    }
    return std::nullopt;
  };
  // Task text runs as trusted code: on a loopback listener, or from the admin.
  auto may_send_task_text = [this](Role role) -> std::optional<RequestError> {
    if (!options_.task_text_refused.empty()) {
      return RequestError{403, "task_source",
                          "task text is refused on this machine: " + options_.task_text_refused +
                              "; send task_hash of a task registered before"};
    }
    if (IsLoopbackHost(options_.host) || role == Role::kAdmin) return std::nullopt;
    return RequestError{403, "task_source",
                        "task text is taken on a loopback listener or with the admin token: send task_hash of a task "
                        "registered with POST /v1/tasks"};
  };
  auto unauthorized = [](HttpResponse& res, const RequestError& e) {
    if (e.http_status == 401) res.set_header("WWW-Authenticate", "Bearer");
    Error(res, e);
  };
  auto parse_one = [this, may_send_task_text](const std::string& body, Role role) {
    ParsedRequest parsed = ParseEvaluateRequest(body, options_.limits);
    if (!parsed.error && !parsed.request.task_source.empty()) parsed.error = may_send_task_text(role);
    return parsed;
  };

  s.Route("GET", "/healthz", counted("/healthz", [](const HttpRequest&, HttpResponse& res) {
            SetContent(res, "{\"status\":\"ok\"}", "application/json");
          }));
  s.Route("GET", "/readyz", counted("/readyz", [this](const HttpRequest&, HttpResponse& res) {
            const ServiceLoad load = service_.Load();
            const bool ready = workers_ready_;
            json body = {{"ready", ready},
                         {"backend", service_.backend_name()},
                         {"jobs", {{"queued", load.queued}, {"running", load.evaluating}}}};
            if (!ready) {
              body["starting"] = "the Python workers (PyTorch is imported once, a few seconds)";
              res.status = 503;
            }
            SetContent(res, body.dump(), "application/json");
          }));
  s.Route("GET", "/metrics", counted("/metrics", [this](const HttpRequest&, HttpResponse& res) {
            SetContent(res, metrics_.Render(service_.Load(), sync_waiting_.load()), "text/plain; version=0.0.4");
          }));

  s.Route("POST", "/v1/evaluate",
          counted("/v1/evaluate", [this, parse_one, admit, unauthorized](const HttpRequest& req, HttpResponse& res) {
            Role role = Role::kAnonymous;
            if (auto e = admit(req, role)) return unauthorized(res, *e);
            const auto start = Clock::now();
            if (!IsJson(req)) return Error(res, RequestError{415, "", "send the request as application/json"});
            ParsedRequest parsed = parse_one(req.body, role);
            if (parsed.error) return Error(res, *parsed.error);
            const EvaluateRequest& r = parsed.request;
            if (sync_waiting_.fetch_add(1) >= options_.max_sync) {
              sync_waiting_.fetch_sub(1);
              res.set_header("Retry-After", "1");
              return Error(res, RequestError{429, "",
                                             std::to_string(options_.max_sync) +
                                                 " /v1/evaluate calls already wait for verdicts (--max-sync): retry "
                                                 "after a while, or post jobs (/v1/jobs) and poll them"});
            }
            auto accepted = service_.Submit({r});
            if (accepted.error) {
              sync_waiting_.fetch_sub(1);
              if (accepted.error->http_status == 429 || accepted.error->http_status == 503) {
                res.set_header("Retry-After", "5");
              }
              return Error(res, *accepted.error);
            }
            const std::shared_ptr<ServiceJob> job = accepted.jobs.front();
            ServiceJob::Snapshot now;
            if (r.deadline_s) {
              const double left = *r.deadline_s - Since(start);
              now = left > 0 ? job->Wait(std::chrono::duration<double>(left)) : job->Now();
            } else {
              while (!Finished(now = job->Wait(std::chrono::seconds(60)))) {
              }
            }
            sync_waiting_.fetch_sub(1);
            if (now.state == JobState::kCancelled) {
              return Error(
                  res,
                  RequestError{409, "", "job " + job->id() + " was cancelled (DELETE /v1/jobs/" + job->id() + ")"});
            }
            if (now.verdict.empty()) {
              res.status = 503;
              res.set_header("Retry-After", "5");
              json body = {{"error",
                            {{"field", "deadline_s"},
                             {"message", "no verdict within deadline_s = " + json(*r.deadline_s).dump() +
                                             " s; the job goes on: GET /v1/jobs/" + job->id() + " for its verdict"}}},
                           {"job_id", job->id()}};
              return SetContent(res, body.dump(), "application/json");
            }
            SetContent(res, "{\"job_id\":" + json(job->id()).dump() + ",\"verdict\":" + now.verdict + "}",
                       "application/json");
          }));

  s.Route("POST", "/v1/jobs",
          counted("/v1/jobs", [this, parse_one, admit, unauthorized](const HttpRequest& req, HttpResponse& res) {
            Role role = Role::kAnonymous;
            if (auto e = admit(req, role)) return unauthorized(res, *e);
            if (!IsJson(req)) return Error(res, RequestError{415, "", "send the request as application/json"});
            json body = json::parse(req.body, nullptr, /*allow_exceptions=*/false);
            if (body.is_discarded() || !body.is_object()) {
              return Error(res, RequestError{400, "", "the body must be a JSON object: one job, or {\"jobs\": [...]}"});
            }
            std::string key;
            if (body.contains("idempotency_key")) {
              if (!body["idempotency_key"].is_string() || body["idempotency_key"].get<std::string>().empty() ||
                  body["idempotency_key"].get<std::string>().size() > 256) {
                return Error(res, RequestError{400, "idempotency_key", "must be a string of 1 to 256 characters"});
              }
              key = body["idempotency_key"].get<std::string>();
              body.erase("idempotency_key");
            }
            std::vector<json> items;
            const bool batch = body.contains("jobs");
            if (batch) {
              if (body.size() != 1) {
                return Error(res, RequestError{400, "", "a batch holds \"jobs\" and \"idempotency_key\" only"});
              }
              if (!body["jobs"].is_array() || body["jobs"].empty()) {
                return Error(res, RequestError{400, "jobs", "must be a non-empty array of jobs"});
              }
              if (body["jobs"].size() > options_.max_batch) {
                return Error(res, RequestError{413, "jobs",
                                               "holds more than " + std::to_string(options_.max_batch) +
                                                   " jobs: post them in several batches"});
              }
              for (auto& item : body["jobs"]) items.push_back(std::move(item));
            } else {
              items.push_back(std::move(body));
            }
            std::vector<EvaluateRequest> requests;
            for (std::size_t i = 0; i < items.size(); ++i) {
              ParsedRequest parsed = parse_one(items[i].dump(), role);
              if (parsed.error) {
                if (batch) {
                  parsed.error->field = "jobs[" + std::to_string(i) + "]" +
                                        (parsed.error->field.empty() ? "" : "." + parsed.error->field);
                }
                return Error(res, *parsed.error);
              }
              requests.push_back(std::move(parsed.request));
            }
            auto accepted = service_.Submit(requests, key);
            if (accepted.error) {
              if (accepted.error->http_status == 429 || accepted.error->http_status == 503) {
                res.set_header("Retry-After", "5");
              }
              return Error(res, *accepted.error);
            }
            json ids = json::array();
            for (const auto& job : accepted.jobs) ids.push_back(job->id());
            res.status = accepted.repeated ? 200 : 202;
            SetContent(res, json{{"job_ids", ids}}.dump(), "application/json");
          }));

  s.Route("POST", "/v1/tasks",
          counted("/v1/tasks", [this, admit, unauthorized](const HttpRequest& req, HttpResponse& res) {
            Role role = Role::kAnonymous;
            if (auto e = admit(req, role)) return unauthorized(res, *e);
            if (role != Role::kAdmin && !options_.admin_token.empty()) {
              return unauthorized(res, RequestError{403, "", "registering a task takes the admin token"});
            }
            if (!IsJson(req)) return Error(res, RequestError{415, "", "send the request as application/json"});
            json body = json::parse(req.body, nullptr, /*allow_exceptions=*/false);
            if (body.is_discarded() || !body.is_object()) {
              return Error(res, RequestError{400, "", "the body must be a JSON object {\"task_source\": ...}"});
            }
            for (const auto& [key, value] : body.items()) {
              if (key != "task_source") {
                return Error(res, RequestError{400, key,
                                               "unknown field; a task takes task_source alone (a sidecar goes with "
                                               "each request that names the task)"});
              }
            }
            if (!body.contains("task_source") || !body["task_source"].is_string() ||
                body["task_source"].get<std::string>().empty()) {
              return Error(res, RequestError{400, "task_source", "must be the task's text"});
            }
            const std::string source = body["task_source"].get<std::string>();
            if (source.size() > options_.limits.max_source_bytes) {
              return Error(res, RequestError{413, "task_source",
                                             "is over the limit of " +
                                                 std::to_string(options_.limits.max_source_bytes / 1024) + " KiB"});
            }
            auto hash = service_.RegisterTask(source);
            if (auto* e = std::get_if<RequestError>(&hash)) return Error(res, *e);
            res.status = 201;
            SetContent(res, json{{"task_hash", std::get<std::string>(hash)}}.dump(), "application/json");
          }));

  s.Route("GET", "/v1/jobs/{id}",
          counted("/v1/jobs/{id}", [this, wait_of, admit, unauthorized](const HttpRequest& req, HttpResponse& res) {
            Role role = Role::kAnonymous;
            if (auto e = admit(req, role)) return unauthorized(res, *e);
            double wait = 0;
            if (auto e = wait_of(req, wait)) return Error(res, *e);
            const std::string id = req.path_params.at(0);
            auto job = service_.Find(id);
            if (!job) return Error(res, RequestError{404, "", "no job " + id + " here"});
            SetContent(res, JobJson(id, wait > 0 ? job->Wait(std::chrono::duration<double>(wait)) : job->Now()),
                       "application/json");
          }));
  s.Route("GET", "/v1/jobs",
          counted("/v1/jobs", [this, wait_of, admit, unauthorized](const HttpRequest& req, HttpResponse& res) {
            Role role = Role::kAnonymous;
            if (auto e = admit(req, role)) return unauthorized(res, *e);
            double wait = 0;
            if (auto e = wait_of(req, wait)) return Error(res, *e);
            const std::string list = req.param("ids");
            if (list.empty()) return Error(res, RequestError{400, "ids", "name the jobs: ?ids=ID,ID,..."});
            std::vector<std::shared_ptr<ServiceJob>> jobs;
            for (std::size_t at = 0; at <= list.size();) {
              std::size_t comma = list.find(',', at);
              if (comma == std::string::npos) comma = list.size();
              const std::string id = list.substr(at, comma - at);
              at = comma + 1;
              if (id.empty()) continue;
              auto job = service_.Find(id);
              if (!job) return Error(res, RequestError{404, "ids", "no job " + id + " here"});
              jobs.push_back(job);
              if (jobs.size() > options_.max_batch) {
                return Error(
                    res, RequestError{400, "ids", "names more than " + std::to_string(options_.max_batch) + " jobs"});
              }
            }
            // Waits until every job is finished or the wait is over, then
            // answers each job's state.
            const auto until =
                Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(wait));
            std::string out = "{\"jobs\":[";
            for (std::size_t i = 0; i < jobs.size(); ++i) {
              const auto left = std::chrono::duration<double>(until - Clock::now());
              out += (i ? "," : "") + JobJson(jobs[i]->id(), left.count() > 0 ? jobs[i]->Wait(left) : jobs[i]->Now());
            }
            SetContent(res, out + "]}", "application/json");
          }));
  s.Route("DELETE", "/v1/jobs/{id}",
          counted("/v1/jobs/{id}", [this, admit, unauthorized](const HttpRequest& req, HttpResponse& res) {
            Role role = Role::kAnonymous;
            if (auto e = admit(req, role)) return unauthorized(res, *e);
            const std::string id = req.path_params.at(0);
            auto job = service_.Cancel(id);
            if (!job) return Error(res, RequestError{404, "", "no job " + id + " here"});
            const ServiceJob::Snapshot now = job->Now();
            if (now.state == JobState::kDone) {
              return Error(res, RequestError{409, "", "job " + id + " is done already: its verdict stands"});
            }
            SetContent(res, JobJson(id, now), "application/json");
          }));

  // Compatibility endpoints for trainers that post one sample in their own
  // shape and read the answer as the reward: slime's remote_rm and
  // OpenRLHF's remote reward. The code comes from the response part, the
  // task from the label (its sha256); each answers by its trainer's timeout
  // (`deadline_s`, default 110 s for slime's 120, 170 s for OpenRLHF's 180),
  // a sample without a verdict by then flagged as an infra error.
  auto judge_samples = [this](const std::vector<std::pair<std::string, std::string>>& samples, const HttpRequest& req,
                              double default_deadline, std::vector<json>& results) -> std::optional<RequestError> {
    const auto start = Clock::now();
    double deadline = default_deadline;
    if (req.params.count("deadline_s")) {
      char* end = nullptr;
      const std::string text = req.param("deadline_s");
      deadline = std::strtod(text.c_str(), &end);
      if (text.empty() || *end != '\0' || !(deadline > 0) || deadline > options_.limits.max_deadline_s) {
        return RequestError{400, "deadline_s", "must be a number of seconds above 0 and at most 3600"};
      }
    }
    const std::string format = req.params.count("format") ? req.param("format") : "kernelbench";
    std::vector<EvaluateRequest> requests;
    std::vector<std::size_t> judged;  // Which samples became requests.
    results.assign(samples.size(), json());
    for (std::size_t i = 0; i < samples.size(); ++i) {
      json body = {{"task_hash", samples[i].second},
                   {"response", samples[i].first},
                   {"candidate_format", format},
                   {"backend", service_.backend_name()}};
      if (req.params.count("policy")) body["policy"] = req.param("policy");
      ParsedRequest parsed = ParseEvaluateRequest(body.dump(), options_.limits);
      if (parsed.error && !parsed.error->outcome.empty()) {
        results[i] = SampleResult(nullptr, parsed.error->outcome);
        continue;
      }
      if (parsed.error) {
        // Named as the trainer sent them: the label, the format parameter.
        if (parsed.error->field == "task_hash") parsed.error->field = "label";
        if (parsed.error->field == "candidate_format") parsed.error->field = "format";
        return parsed.error;
      }
      requests.push_back(std::move(parsed.request));
      judged.push_back(i);
    }
    if (requests.empty()) return std::nullopt;
    auto accepted = service_.Submit(requests);
    if (accepted.error) {
      // Refusals the trainer cannot fix by retrying are errors; a busy or
      // stopping service answers flagged samples, never a silent reward.
      if (accepted.error->http_status != 429 && accepted.error->http_status != 503) return accepted.error;
      for (std::size_t i : judged) results[i] = SampleResult(nullptr, "");
      return std::nullopt;
    }
    for (std::size_t k = 0; k < judged.size(); ++k) {
      const double left = deadline - Since(start);
      const ServiceJob::Snapshot now =
          left > 0 ? accepted.jobs[k]->Wait(std::chrono::duration<double>(left)) : accepted.jobs[k]->Now();
      json verdict = now.verdict.empty() ? json() : json::parse(now.verdict, nullptr, false);
      results[judged[k]] = SampleResult(verdict.is_object() ? &verdict : nullptr, "");
    }
    return std::nullopt;
  };

  auto slime = [this, admit, unauthorized, judge_samples](const HttpRequest& req, HttpResponse& res) {
    Role role = Role::kAnonymous;
    if (auto e = admit(req, role, req.path_params.empty() ? "" : req.path_params[0])) return unauthorized(res, *e);
    json body = json::parse(req.body, nullptr, /*allow_exceptions=*/false);
    if (body.is_discarded() || !body.is_object() || !body.contains("response") || !body["response"].is_string() ||
        !body.contains("label") || !body["label"].is_string()) {
      return Error(res, RequestError{400, "",
                                     "slime's remote_rm body: {\"prompt\", \"response\", \"label\": the "
                                     "task's sha256}"});
    }
    std::vector<json> results;
    if (auto e = judge_samples({{body["response"].get<std::string>(), body["label"].get<std::string>()}}, req, 110,
                               results)) {
      return Error(res, *e);
    }
    SetContent(res, results.front().dump(), "application/json");
  };
  s.Route("POST", "/v1/compat/slime", counted("/v1/compat/slime", slime));
  s.Route("POST", "/v1/compat/slime/{token}", counted("/v1/compat/slime", slime));

  auto openrlhf = [this, admit, unauthorized, judge_samples](const HttpRequest& req, HttpResponse& res) {
    Role role = Role::kAnonymous;
    if (auto e = admit(req, role, req.path_params.empty() ? "" : req.path_params[0])) return unauthorized(res, *e);
    json body = json::parse(req.body, nullptr, /*allow_exceptions=*/false);
    auto strings = [&](const char* key) {
      return body.is_object() && body.contains(key) && body[key].is_array() &&
             std::all_of(body[key].begin(), body[key].end(), [](const json& x) { return x.is_string(); });
    };
    if (!strings("query") || !strings("labels") || body["query"].size() != body["labels"].size() ||
        (body.contains("prompts") && (!strings("prompts") || body["prompts"].size() != body["query"].size()))) {
      return Error(res, RequestError{400, "",
                                     "OpenRLHF's remote reward body: {\"query\": [...], \"prompts\": [...], "
                                     "\"labels\": [the tasks' sha256]}, lists of one length"});
    }
    std::vector<std::pair<std::string, std::string>> samples;
    for (std::size_t i = 0; i < body["query"].size(); ++i) {
      std::string text = body["query"][i].get<std::string>();
      // The query is the prompt and the response: the code is the response's.
      if (body.contains("prompts")) {
        const std::string prompt = body["prompts"][i].get<std::string>();
        if (text.rfind(prompt, 0) == 0) text = text.substr(prompt.size());
      }
      samples.emplace_back(text, body["labels"][i].get<std::string>());
    }
    std::vector<json> results;
    if (auto e = judge_samples(samples, req, 170, results)) return Error(res, *e);
    json answer = {{"rewards", json::array()}, {"scores", json::array()}, {"extra_logs", json::object()}};
    for (const json& r : results) {
      answer["rewards"].push_back(r["score"]);
      answer["scores"].push_back(r["anvil_q"]);
      for (const char* key : {"anvil_status_code", "anvil_speedup", "anvil_infra_error", "anvil_cached"}) {
        answer["extra_logs"][key].push_back(r[key]);
      }
    }
    SetContent(res, answer.dump(), "application/json");
  };
  s.Route("POST", "/v1/compat/openrlhf", counted("/v1/compat/openrlhf", openrlhf));
  s.Route("POST", "/v1/compat/openrlhf/{token}", counted("/v1/compat/openrlhf", openrlhf));
}

}  // namespace anvil
