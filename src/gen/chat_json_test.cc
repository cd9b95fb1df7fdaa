#include "gen/chat_json.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace anvil {
namespace {

TEST(ChatJsonTest, SendsOnlyWhatIsSet) {
  ChatRequest r;
  r.model = "m";
  r.messages = {{"system", "be brief"}, {"user", "hi \"there\"\n{}"}};
  auto body = nlohmann::json::parse(ChatRequestBody(r));
  EXPECT_EQ(body["model"], "m");
  EXPECT_EQ(body["messages"][1]["content"], "hi \"there\"\n{}");
  for (const char* absent : {"temperature", "top_p", "max_tokens", "max_completion_tokens", "seed", "stop", "n",
                             "logprobs", "return_token_ids"}) {
    EXPECT_FALSE(body.contains(absent)) << absent;
  }
  r.sampling.temperature = 0.7;
  r.sampling.max_tokens = 100;
  r.sampling.seed = 42;
  r.sampling.stop = {"```\n\n"};
  r.sampling.n = 4;
  r.sampling.logprobs = true;
  r.sampling.top_logprobs = 2;
  r.sampling.return_token_ids = true;
  body = nlohmann::json::parse(ChatRequestBody(r));
  EXPECT_DOUBLE_EQ(body["temperature"], 0.7);
  EXPECT_EQ(body["max_tokens"], 100);
  EXPECT_EQ(body["seed"], 42);
  EXPECT_EQ(body["stop"][0], "```\n\n");
  EXPECT_EQ(body["n"], 4);
  EXPECT_EQ(body["logprobs"], true);
  EXPECT_EQ(body["top_logprobs"], 2);
  EXPECT_EQ(body["return_token_ids"], true);
  r.sampling.max_completion_tokens = true;
  body = nlohmann::json::parse(ChatRequestBody(r));
  EXPECT_EQ(body["max_completion_tokens"], 100);
  EXPECT_FALSE(body.contains("max_tokens"));
}

TEST(ChatJsonTest, ReadsAChatCompletion) {
  const std::string body = R"({"id": "c1", "model": "served", "choices": [
      {"index": 0, "message": {"role": "assistant", "content": "code", "reasoning_content": "think"},
       "finish_reason": "length", "token_ids": [5, 6],
       "logprobs": {"content": [{"token": "co", "logprob": -0.5}, {"token": "de", "logprob": -1.25}]}},
      {"index": 1, "message": {"role": "assistant", "content": null, "refusal": "no"}, "finish_reason": "stop"}],
      "usage": {"prompt_tokens": 10, "completion_tokens": 20, "completion_tokens_details": {"reasoning_tokens": 7}}})";
  auto r = ParseChatResponse(body);
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r.value().id, "c1");
  EXPECT_EQ(r.value().model, "served");
  ASSERT_EQ(r.value().choices.size(), 2u);
  const ChatChoice& c = r.value().choices[0];
  EXPECT_EQ(c.content, "code");
  EXPECT_EQ(c.reasoning, "think");
  EXPECT_EQ(c.finish_reason, "length");
  EXPECT_EQ(c.token_ids, (std::vector<int64_t>{5, 6}));
  ASSERT_EQ(c.logprobs.size(), 2u);
  EXPECT_DOUBLE_EQ(c.logprobs[1].logprob, -1.25);
  EXPECT_EQ(r.value().choices[1].content, "");
  EXPECT_EQ(r.value().choices[1].refusal, "no");
  ASSERT_TRUE(r.value().usage.has_value());
  EXPECT_EQ(r.value().usage->prompt, 10);
  EXPECT_EQ(r.value().usage->completion, 20);
  EXPECT_EQ(r.value().usage->reasoning, 7);
}

TEST(ChatJsonTest, AnAnswerThatIsNotACompletionIsNamed) {
  struct Case {
    std::string body, says;
  } cases[] = {
      {"<html>Bad Gateway</html>", "not JSON: '<html>Bad Gateway</html>'"},
      {"", "not JSON: (empty)"},
      {"[1, 2]", "not an object"},
      {R"({"error": {"message": "model not loaded"}})", "model not loaded"},
      {R"({"object": "list"})", "no choices"},
      {R"({"choices": []})", "no choices"},
      {R"({"choices": [{"text": "completions, not chat"}]})", "no message object"},
  };
  for (const Case& c : cases) {
    auto r = ParseChatResponse(c.body);
    ASSERT_FALSE(r.ok()) << c.body;
    EXPECT_NE(r.message().find(c.says), std::string::npos) << r.message();
  }
}

TEST(ChatJsonTest, ExcerptsAreShortAndOnOneLine) {
  EXPECT_EQ(BodyExcerpt("a\nb\tc"), "'a b c'");
  const std::string long_body(1000, 'x');
  EXPECT_EQ(BodyExcerpt(long_body, 10), "'xxxxxxxxxx...'");
  EXPECT_EQ(BodyExcerpt("caf\xc3\xa9"),
            "'caf?"
            "?'");
}

}  // namespace
}  // namespace anvil
