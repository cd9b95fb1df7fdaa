#include "gen/chat_json.h"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace anvil {
namespace {

using nlohmann::json;

// A string field, or "" when absent or not a string.
std::string Text(const json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

// An integer field, or nullopt when absent or not a number.
std::optional<int64_t> Integer(const json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_number()) return std::nullopt;
  return it->get<int64_t>();
}

Result<ChatChoice> ParseChoice(const json& c, const std::string& body) {
  if (!c.is_object()) return Status::Error("a choice is not an object: " + BodyExcerpt(body));
  ChatChoice choice;
  choice.finish_reason = Text(c, "finish_reason");
  const auto message = c.find("message");
  if (message == c.end() || !message->is_object()) {
    return Status::Error("a choice has no message object: " + BodyExcerpt(body));
  }
  choice.content = Text(*message, "content");
  choice.refusal = Text(*message, "refusal");
  choice.reasoning = Text(*message, "reasoning");
  if (choice.reasoning.empty()) choice.reasoning = Text(*message, "reasoning_content");
  if (const auto ids = c.find("token_ids"); ids != c.end() && ids->is_array()) {
    for (const json& id : *ids) {
      if (id.is_number_integer()) choice.token_ids.push_back(id.get<int64_t>());
    }
  }
  if (const auto lp = c.find("logprobs"); lp != c.end() && lp->is_object()) {
    if (const auto content = lp->find("content"); content != lp->end() && content->is_array()) {
      for (const json& t : *content) {
        if (!t.is_object()) continue;
        const auto value = t.find("logprob");
        choice.logprobs.push_back(
            {Text(t, "token"), value != t.end() && value->is_number() ? value->get<double>() : 0.0});
      }
    }
  }
  return choice;
}

}  // namespace

std::string ChatRequestBody(const ChatRequest& request) {
  json messages = json::array();
  for (const ChatMessage& m : request.messages) messages.push_back({{"role", m.role}, {"content", m.content}});
  json body = {{"model", request.model}, {"messages", std::move(messages)}};
  const SamplingParams& s = request.sampling;
  if (s.temperature) body["temperature"] = *s.temperature;
  if (s.top_p) body["top_p"] = *s.top_p;
  if (s.max_tokens) body[s.max_completion_tokens ? "max_completion_tokens" : "max_tokens"] = *s.max_tokens;
  if (s.seed) body["seed"] = *s.seed;
  if (!s.stop.empty()) body["stop"] = s.stop;
  if (s.n != 1) body["n"] = s.n;
  if (s.logprobs) {
    body["logprobs"] = true;
    if (s.top_logprobs) body["top_logprobs"] = *s.top_logprobs;
  }
  if (s.return_token_ids) body["return_token_ids"] = true;
  return body.dump();
}

Result<ChatResponse> ParseChatResponse(const std::string& body) {
  const json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Status::Error("the answer is not JSON: " + BodyExcerpt(body));
  if (!j.is_object()) return Status::Error("the answer is JSON but not an object: " + BodyExcerpt(body));
  if (const auto error = j.find("error"); error != j.end() && !error->is_null()) {
    const std::string said = error->is_object() ? Text(*error, "message") : "";
    return Status::Error("the server answered with an error: " + (said.empty() ? BodyExcerpt(error->dump()) : said));
  }
  const auto choices = j.find("choices");
  if (choices == j.end() || !choices->is_array() || choices->empty()) {
    return Status::Error("the answer has no choices: " + BodyExcerpt(body));
  }
  ChatResponse response;
  response.id = Text(j, "id");
  response.model = Text(j, "model");
  std::vector<std::pair<int64_t, ChatChoice>> indexed;  // In the order of their "index" (n > 1).
  for (const json& c : *choices) {
    auto choice = ParseChoice(c, body);
    if (!choice.ok()) return choice.status();
    const std::optional<int64_t> index = c.is_object() ? Integer(c, "index") : std::nullopt;
    indexed.emplace_back(index.value_or(static_cast<int64_t>(indexed.size())), std::move(choice).value());
  }
  std::stable_sort(indexed.begin(), indexed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [index, choice] : indexed) response.choices.push_back(std::move(choice));
  if (const auto usage = j.find("usage"); usage != j.end() && usage->is_object()) {
    TokenUsage u;
    u.prompt = Integer(*usage, "prompt_tokens").value_or(0);
    u.completion = Integer(*usage, "completion_tokens").value_or(0);
    if (const auto details = usage->find("completion_tokens_details");
        details != usage->end() && details->is_object()) {
      u.reasoning = Integer(*details, "reasoning_tokens");
    }
    response.usage = u;
  }
  return response;
}

std::string BodyExcerpt(const std::string& body, std::size_t max_chars) {
  if (body.empty()) return "(empty)";
  std::string out;
  for (std::size_t i = 0; i < body.size() && out.size() < max_chars; ++i) {
    const unsigned char c = static_cast<unsigned char>(body[i]);
    out.push_back(c < 0x20 || c == 0x7f ? ' ' : c >= 0x80 ? '?' : static_cast<char>(c));
  }
  if (body.size() > out.size()) out += "...";
  return "'" + out + "'";
}

}  // namespace anvil
