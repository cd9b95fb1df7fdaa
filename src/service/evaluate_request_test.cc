#include "service/evaluate_request.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace anvil {
namespace {

using nlohmann::json;

json Good() {
  return {{"task_source", "class Model: ..."},
          {"candidate_source", "int anvil_forward();"},
          {"candidate_format", "native"},
          {"backend", "cpu"}};
}

RequestError ErrorOf(const json& body, const RequestLimits& limits = {}) {
  ParsedRequest p = ParseEvaluateRequest(body.dump(), limits);
  EXPECT_TRUE(p.error.has_value()) << body.dump();
  return p.error.value_or(RequestError{});
}

TEST(EvaluateRequestTest, AGoodRequestParsesWithItsOptions) {
  json body = Good();
  body["policy"] = "kernelbench";
  body["trials"] = 7;
  body["deadline_s"] = 2.5;
  body["reward"] = {{"lambda", 0.25}, {"nu_max", 2}, {"vs", "compile"}};
  body["sidecar"] = {{"level", 2}};
  ParsedRequest p = ParseEvaluateRequest(body.dump(), {});
  ASSERT_FALSE(p.error.has_value()) << p.error->message;
  EXPECT_EQ(p.request.task_source, "class Model: ...");
  EXPECT_EQ(p.request.candidate_format, "native");
  EXPECT_EQ(p.request.policy, "kernelbench");
  EXPECT_EQ(p.request.trials, 7);
  EXPECT_DOUBLE_EQ(p.request.deadline_s.value(), 2.5);
  EXPECT_DOUBLE_EQ(p.request.reward->lambda, 0.25);
  EXPECT_DOUBLE_EQ(p.request.reward->nu_max, 2);
  EXPECT_TRUE(p.request.reward->against_compile);
  EXPECT_EQ(json::parse(p.request.sidecar_json), json({{"level", 2}}));
}

TEST(EvaluateRequestTest, DefaultsAreLeftToTheService) {
  ParsedRequest p = ParseEvaluateRequest(Good().dump(), {});
  ASSERT_FALSE(p.error.has_value());
  EXPECT_EQ(p.request.policy, "");
  EXPECT_FALSE(p.request.trials.has_value());
  EXPECT_FALSE(p.request.deadline_s.has_value());
  EXPECT_FALSE(p.request.reward.has_value());
  EXPECT_EQ(p.request.sidecar_json, "");
}

TEST(EvaluateRequestTest, EachBadFieldIsNamed) {
  struct Case {
    const char* field;
    json value;
  };
  for (const Case& c : std::vector<Case>{{"candidate_format", "triton"},
                                         {"backend", "musa"},
                                         {"candidate_source", 3},
                                         {"policy", "lenient"},
                                         {"trials", 0},
                                         {"trials", 101},
                                         {"trials", 1.5},
                                         {"deadline_s", 0},
                                         {"deadline_s", 3601},
                                         {"deadline_s", "soon"},
                                         {"sidecar", "level 1"},
                                         {"reward", 1},
                                         {"canddiate_source", "x"}}) {
    json body = Good();
    body[c.field] = c.value;
    RequestError e = ErrorOf(body);
    EXPECT_EQ(e.http_status, 400) << c.field;
    EXPECT_EQ(e.field, c.field) << e.message;
    EXPECT_FALSE(e.message.empty());
  }
  json reward = Good();
  reward["reward"] = {{"lambda", -1}};
  EXPECT_EQ(ErrorOf(reward).field, "reward.lambda");
  reward["reward"] = {{"beta", 1}};
  EXPECT_EQ(ErrorOf(reward).field, "reward.beta");
}

TEST(EvaluateRequestTest, ExactlyOneOfTaskSourceAndTaskHash) {
  json both = Good();
  both["task_hash"] = std::string(64, 'a');
  EXPECT_EQ(ErrorOf(both).field, "task_hash");
  json neither = Good();
  neither.erase("task_source");
  EXPECT_EQ(ErrorOf(neither).field, "task_source");
  json short_hash = neither;
  short_hash["task_hash"] = "abc";
  EXPECT_EQ(ErrorOf(short_hash).field, "task_hash");
  json upper = neither;
  upper["task_hash"] = std::string(64, 'A');
  EXPECT_EQ(ErrorOf(upper).field, "task_hash");
  json hash = neither;
  hash["task_hash"] = std::string(64, 'a');
  EXPECT_FALSE(ParseEvaluateRequest(hash.dump(), {}).error.has_value());
}

TEST(EvaluateRequestTest, SourcesOverTheLimitAre413) {
  RequestLimits limits;
  limits.max_source_bytes = 10;
  json body = Good();
  body["task_source"] = std::string(11, 'x');
  RequestError e = ErrorOf(body, limits);
  EXPECT_EQ(e.http_status, 413);
  EXPECT_EQ(e.field, "task_source");
  body["task_source"] = "x";
  body["candidate_source"] = std::string(11, 'x');
  EXPECT_EQ(ErrorOf(body, limits).field, "candidate_source");
}

TEST(EvaluateRequestTest, NotAnObjectOrNotJson) {
  EXPECT_EQ(ParseEvaluateRequest("{", {}).error->field, "");
  EXPECT_EQ(ParseEvaluateRequest("[]", {}).error->http_status, 400);
  EXPECT_EQ(ParseEvaluateRequest("", {}).error->http_status, 400);
  // A number past an int's range is refused, not wrapped.
  json body = Good();
  body["trials"] = 1e30;
  EXPECT_EQ(ErrorOf(body).field, "trials");
}

TEST(EvaluateRequestTest, AResponseGivesTheCodeItHolds) {
  json body = Good();
  body.erase("candidate_source");
  body["candidate_format"] = "kernelbench";
  body["response"] = "Here:\n```cpp\nextern \"C\" int anvil_forward() { return 0; }\n```\n";
  ParsedRequest p = ParseEvaluateRequest(body.dump(), {});
  ASSERT_FALSE(p.error.has_value()) << p.error->message;
  EXPECT_EQ(p.request.candidate_source, "extern \"C\" int anvil_forward() { return 0; }\n");
  EXPECT_EQ(p.request.candidate_format, "native");  // The code's own format.
  body["response"] = "I would rather not.";
  RequestError none = ErrorOf(body);
  EXPECT_EQ(none.http_status, 422);
  EXPECT_EQ(none.field, "response");
  EXPECT_EQ(none.outcome, "no_code");
  EXPECT_EQ(json::parse(RequestErrorJson(none))["outcome"], "no_code");
  body["response"] = "```python\nclass ModelNew:";
  body["finish_reason"] = "length";
  EXPECT_EQ(ErrorOf(body).outcome, "truncated");
  json both = Good();
  both["response"] = "x";
  EXPECT_EQ(ErrorOf(both).field, "response");
  json stray = Good();
  stray["finish_reason"] = "stop";
  EXPECT_EQ(ErrorOf(stray).field, "finish_reason");
}

TEST(EvaluateRequestTest, ErrorJsonHasFieldAndMessage) {
  json j = json::parse(RequestErrorJson(RequestError{400, "trials", "must be an integer"}));
  EXPECT_EQ(j["error"]["field"], "trials");
  EXPECT_EQ(j["error"]["message"], "must be an integer");
}

}  // namespace
}  // namespace anvil
