#include "service/evaluate_request.h"

#include <cmath>
#include <nlohmann/json.hpp>
#include <set>

#include "gen/extract_code.h"
#include "verify/policy.h"

namespace anvil {
namespace {

using nlohmann::json;

bool IsHex64(const std::string& s) {
  if (s.size() != 64) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

std::string Kib(std::size_t bytes) { return std::to_string(bytes / 1024) + " KiB"; }

// Every field of a request body; anything else is refused.
const std::set<std::string>& KnownFields() {
  static const std::set<std::string> known = {"task_source",   "task_hash",        "candidate_source", "response",
                                              "finish_reason", "candidate_format", "backend",          "sidecar",
                                              "policy",        "reward",           "trials",           "deadline_s"};
  return known;
}

std::optional<RequestError> ParseReward(const json& j, RewardOptions& reward) {
  if (!j.is_object()) return RequestError{400, "reward", "must be an object {\"lambda\", \"nu_max\", \"vs\"}"};
  for (const auto& [key, value] : j.items()) {
    const std::string field = "reward." + key;
    if (key == "lambda" || key == "nu_max") {
      if (!value.is_number() || !std::isfinite(value.get<double>()) || value.get<double>() < 0) {
        return RequestError{400, field, "must be a finite number >= 0"};
      }
      (key == "lambda" ? reward.lambda : reward.nu_max) = value.get<double>();
    } else if (key == "vs") {
      if (!value.is_string() || (value != "eager" && value != "compile")) {
        return RequestError{400, field, "must be \"eager\" or \"compile\" (the baseline the speedup is over)"};
      }
      reward.against_compile = value == "compile";
    } else {
      return RequestError{400, field, "unknown field; reward takes lambda, nu_max and vs"};
    }
  }
  return std::nullopt;
}

std::optional<RequestError> Parse(const json& j, const RequestLimits& limits, EvaluateRequest& r) {
  if (!j.is_object()) return RequestError{400, "", "the body must be a JSON object"};
  for (const auto& [key, value] : j.items()) {
    if (KnownFields().count(key) == 0) {
      return RequestError{400, key, "unknown field (see docs/service.md for the fields of /v1/evaluate)"};
    }
  }
  auto string_field = [&](const char* name, std::string& out, bool required) -> std::optional<RequestError> {
    if (!j.contains(name)) {
      if (required) return RequestError{400, name, "is required"};
      return std::nullopt;
    }
    if (!j[name].is_string()) return RequestError{400, name, "must be a string"};
    out = j[name].get<std::string>();
    return std::nullopt;
  };
  const bool has_source = j.contains("task_source"), has_hash = j.contains("task_hash");
  if (has_source == has_hash) {
    return RequestError{400, has_source ? "task_hash" : "task_source",
                        "give exactly one of task_source (the task's text) and task_hash (the sha256 of a task's "
                        "text sent before)"};
  }
  if (auto e = string_field("task_source", r.task_source, false)) return e;
  if (auto e = string_field("task_hash", r.task_hash, false)) return e;
  if (has_source && r.task_source.empty()) return RequestError{400, "task_source", "is empty"};
  if (has_hash && !IsHex64(r.task_hash)) {
    return RequestError{400, "task_hash", "must be a sha256 in 64 lowercase hex digits"};
  }
  if (r.task_source.size() > limits.max_source_bytes) {
    return RequestError{413, "task_source", "is over the limit of " + Kib(limits.max_source_bytes)};
  }
  const bool has_response = j.contains("response");
  if (has_response == j.contains("candidate_source")) {
    return RequestError{400, has_response ? "response" : "candidate_source",
                        "give exactly one of candidate_source (the code) and response (a model's whole answer, "
                        "the code extracted from it)"};
  }
  std::string response, finish_reason;
  if (auto e = string_field(has_response ? "response" : "candidate_source",
                            has_response ? response : r.candidate_source, true)) {
    return e;
  }
  if (auto e = string_field("finish_reason", finish_reason, false)) return e;
  if (j.contains("finish_reason") && !has_response) {
    return RequestError{400, "finish_reason", "goes with response only"};
  }
  const std::string& text = has_response ? response : r.candidate_source;
  if (text.size() > limits.max_source_bytes) {
    return RequestError{413, has_response ? "response" : "candidate_source",
                        "is over the limit of " + Kib(limits.max_source_bytes)};
  }
  if (auto e = string_field("candidate_format", r.candidate_format, true)) return e;
  if (r.candidate_format != "kernelbench" && r.candidate_format != "native") {
    return RequestError{400, "candidate_format",
                        "must be \"kernelbench\" (a Python ModelNew) or \"native\" (C++/CUDA with "
                        "anvil_forward)"};
  }
  if (auto e = string_field("backend", r.backend, true)) return e;
  if (r.backend != "cpu" && r.backend != "cuda") return RequestError{400, "backend", "must be \"cpu\" or \"cuda\""};
  if (has_response) {
    ChatChoice choice;
    choice.content = response;
    choice.finish_reason = finish_reason;
    const ExtractedAnswer answer = ExtractAnswer(choice, r.candidate_format, r.backend);
    if (answer.kind != AnswerKind::kCode) {
      RequestError e{422, "response", "", AnswerKindName(answer.kind)};
      e.message = answer.kind == AnswerKind::kTruncated ? "the answer was cut at its token limit (finish_reason length)"
                  : answer.kind == AnswerKind::kRefused ? "the model refused"
                                                        : "no code in the answer: no fenced block, or an empty one";
      e.message += ": outcome " + e.outcome + ", reward -1, nothing to judge";
      return e;
    }
    r.candidate_source = answer.code;
    r.candidate_format = answer.format;
  }
  if (j.contains("sidecar")) {
    if (!j["sidecar"].is_object()) {
      return RequestError{400, "sidecar", "must be an object (a task sidecar: level, tolerance, held_out)"};
    }
    r.sidecar_json = j["sidecar"].dump();
  }
  if (auto e = string_field("policy", r.policy, false)) return e;
  if (j.contains("policy") && !PolicyNamed(r.policy).ok()) {
    return RequestError{400, "policy", PolicyNamed(r.policy).message()};
  }
  if (j.contains("reward")) {
    RewardOptions reward;
    if (auto e = ParseReward(j["reward"], reward)) return e;
    r.reward = reward;
  }
  if (j.contains("trials")) {
    const json& t = j["trials"];
    if (!t.is_number_integer() || t.get<long long>() < 1 || t.get<long long>() > limits.max_trials) {
      return RequestError{400, "trials", "must be an integer from 1 to " + std::to_string(limits.max_trials)};
    }
    r.trials = t.get<int>();
  }
  if (j.contains("deadline_s")) {
    const json& d = j["deadline_s"];
    if (!d.is_number() || !std::isfinite(d.get<double>()) || d.get<double>() <= 0 ||
        d.get<double>() > limits.max_deadline_s) {
      return RequestError{
          400, "deadline_s",
          "must be a number of seconds above 0 and at most " + std::to_string(static_cast<int>(limits.max_deadline_s))};
    }
    r.deadline_s = d.get<double>();
  }
  return std::nullopt;
}

}  // namespace

ParsedRequest ParseEvaluateRequest(const std::string& body, const RequestLimits& limits) {
  ParsedRequest parsed;
  json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    parsed.error = RequestError{400, "", "the body is not valid JSON"};
    return parsed;
  }
  try {
    parsed.error = Parse(j, limits, parsed.request);
  } catch (const json::exception& e) {  // A number out of an int's range, say.
    parsed.error = RequestError{400, "", std::string("malformed request: ") + e.what()};
  }
  return parsed;
}

std::string RequestErrorJson(const RequestError& error) {
  json j = {{"error", {{"field", error.field}, {"message", error.message}}}};
  if (!error.outcome.empty()) j["outcome"] = error.outcome;
  return j.dump();
}

}  // namespace anvil
