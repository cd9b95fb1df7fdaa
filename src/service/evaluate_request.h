// One request for a verdict, as the reward service takes it over HTTP
// (docs/service.md): the task (its text, or the hash of a task the service
// already holds), the candidate's text and format, the backend, and the
// options a trainer may set per request. Parsing checks every field and its
// limits and names the first field that is wrong. Plain values.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "verify/reward.h"

namespace anvil {

// What a request may hold (docs/service.md, "Limits").
struct RequestLimits {
  std::size_t max_source_bytes = std::size_t{1} << 20;  // Each of task_source, candidate_source.
  int max_trials = 100;
  double max_deadline_s = 3600;
};

struct EvaluateRequest {
  std::string task_source;  // The task's Python text, or
  std::string task_hash;    // the sha256 (hex) of a task's text the service holds.
  // The candidate's text; or, from `response` (a model's whole answer), the
  // code the model loop's extractor finds in it (gen/extract_code.h).
  std::string candidate_source;
  std::string candidate_format;  // "kernelbench" | "native": asked for; the code's own when extracted.
  std::string backend;           // "cpu" | "cuda".
  std::string sidecar_json;      // A sidecar object (tasks/task.h), compact JSON; "" for none.
  std::string policy;            // "" for the service's default.
  std::optional<RewardOptions> reward;
  std::optional<int> trials;
  std::optional<double> deadline_s;  // None: wait for the verdict however long it takes.
};

// A request the service refuses before judging it: the HTTP status, the field
// at fault ("" for the body as a whole) and what to do.
struct RequestError {
  RequestError() = default;
  RequestError(int status, std::string field_name, std::string text, std::string outcome_name = "")
      : http_status(status), field(std::move(field_name)), message(std::move(text)), outcome(std::move(outcome_name)) {}
  int http_status = 400;
  std::string field;
  std::string message;
  // For a response that holds no candidate: the model's own outcome
  // ("no_code", "truncated", "refused"), which carries reward -1.
  std::string outcome;
};

struct ParsedRequest {
  EvaluateRequest request;
  std::optional<RequestError> error;
};

// Parses a request body (JSON text). Unknown fields are refused (a misspelt
// option must not be ignored silently). A `response` (with an optional
// `finish_reason`) in place of `candidate_source` is the model's whole
// answer: its code is extracted here; one without code is a 422 whose
// `outcome` says what it holds instead.
ParsedRequest ParseEvaluateRequest(const std::string& body, const RequestLimits& limits);

// The error's JSON body: {"error": {"field": ..., "message": ...}}, and
// "outcome" when there is one.
std::string RequestErrorJson(const RequestError& error);

}  // namespace anvil
