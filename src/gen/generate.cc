#include "gen/generate.h"

#include <cctype>
#include <chrono>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "core/files.h"
#include "gen/chat_json.h"
#include "gen/extract_code.h"
#include "gen/spec_text.h"
#include "tasks/meta_spec.h"
#include "verify/verdict.h"

namespace anvil {
namespace fs = std::filesystem;
namespace {

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

std::string MessagesJson(const std::vector<ChatMessage>& messages) {
  nlohmann::json j = nlohmann::json::array();
  for (const ChatMessage& m : messages) j.push_back({{"role", m.role}, {"content", m.content}});
  return j.dump();
}

// The request's record: the raw answer as it came, whatever became of it.
RequestRecord Record(const std::string& messages_json, const ModelCall& call) {
  RequestRecord q;
  q.messages_json = messages_json;
  if (call.http_status != 0) q.response = call.body;
  q.http_status = call.http_status;
  q.failure = ModelFailureName(call.failure);
  q.message = call.message;
  q.attempts = call.attempts;
  q.latency_s = call.seconds;
  if (call.response && !call.response->choices.empty()) {
    const ChatChoice& c = call.response->choices.front();
    q.finish_reason = c.finish_reason;
    if (!c.logprobs.empty()) {
      nlohmann::json lp = nlohmann::json::array();
      for (const TokenLogprob& t : c.logprobs) lp.push_back({{"token", t.token}, {"logprob", t.logprob}});
      q.logprobs_json = lp.dump();
    }
    if (!c.token_ids.empty()) q.token_ids_json = nlohmann::json(c.token_ids).dump();
  }
  if (call.response && call.response->usage) {
    q.prompt_tokens = call.response->usage->prompt;
    q.completion_tokens = call.response->usage->completion;
    q.reasoning_tokens = call.response->usage->reasoning;
  }
  return q;
}

// What an answer makes of its attempt.
AnswerUpdate Update(const ModelCall& call, const std::string& format, const std::string& backend) {
  AnswerUpdate u;
  if (!call.ok()) {  // The machine's: no reward, asked again on a rerun.
    u.state = AttemptState::kDone;
    u.outcome = "server_error";
    return u;
  }
  const ExtractedAnswer a = ExtractAnswer(call.response->choices.front(), format, backend);
  if (!a.code.empty()) u.code = a.code;
  if (a.kind == AnswerKind::kCode) {
    u.state = AttemptState::kGenerated;
    u.format = a.format;
    return u;
  }
  u.state = AttemptState::kDone;  // The model's own failure: reward -1.
  u.outcome = AnswerKindName(a.kind);
  u.reward = -1.0;
  return u;
}

}  // namespace

std::optional<int64_t> ProblemNumber(const std::string& task_name) {
  std::size_t digits = 0;
  while (digits < task_name.size() && std::isdigit(static_cast<unsigned char>(task_name[digits]))) ++digits;
  if (digits == 0 || digits > 9 || (digits < task_name.size() && task_name[digits] != '_')) return std::nullopt;
  return std::stoll(task_name.substr(0, digits));
}

std::string TaskSetDifference(const std::vector<TaskRow>& recorded, const std::vector<Task>& tasks) {
  if (recorded.empty()) return "";
  std::map<std::string, std::string> have, asked;
  auto key = [](int64_t level, const std::string& name, const std::string& sha) {
    return "level " + std::to_string(level) + " " + name + " (" + sha.substr(0, 12) + ")";
  };
  for (const TaskRow& t : recorded) have[key(t.level, t.name, t.sha256)] = t.path;
  for (const Task& t : tasks) asked[key(t.level, t.name, t.sha256)] = t.path.string();
  std::string diff;
  int listed = 0;
  for (const auto& [k, path] : asked) {
    if (!have.count(k) && listed++ < 5) diff += "\n  not in the run: " + k + " " + path;
  }
  for (const auto& [k, path] : have) {
    if (!asked.count(k) && listed++ < 5) diff += "\n  in the run but not asked now: " + k + " " + path;
  }
  if (listed > 5) diff += "\n  ... and " + std::to_string(listed - 5) + " more";
  return diff;
}

Result<std::map<std::string, std::vector<ChatMessage>>> FirstTurnPrompts(const PromptTemplate& prompt,
                                                                         const std::vector<Task>& tasks,
                                                                         const std::string& backend,
                                                                         const std::string& format,
                                                                         const fs::path& cache_dir) {
  std::map<std::string, MetaSpec> specs;
  if (prompt.needs_spec) {
    auto derived = MetaSpecs(tasks, cache_dir);
    if (!derived.ok()) return derived.status();
    specs = std::move(derived).value();
  }
  std::map<std::string, std::vector<ChatMessage>> prompts;
  for (const Task& t : tasks) {
    std::map<std::string, std::string> extra;
    if (prompt.needs_spec) {
      const MetaSpec& spec = specs[t.sha256];
      extra["tensor_metadata"] = TensorMetadataText(spec.json, spec.error);
      extra["op_trace"] = OpTraceText(spec.json);
    }
    auto messages = FirstTurnMessages(prompt, t.source, backend, format, extra);
    if (!messages.ok()) return Status::Error(t.name + ": " + messages.message());
    prompts[t.sha256] = std::move(messages).value();
  }
  return prompts;
}

Generator::Generator(RunDb& db, ModelClient& client, const PromptTemplate& prompt, std::vector<Evaluator*> evaluators,
                     GenerateOptions options)
    : db_(db), client_(client), prompt_(prompt), evaluators_(std::move(evaluators)), options_(std::move(options)) {}

Status Generator::AddTasks(const std::vector<Task>& tasks) {
  for (const Task& t : tasks) {
    TaskRow row;
    row.name = t.name;
    row.level = t.level;
    row.problem = ProblemNumber(t.name);
    row.path = t.path.string();
    row.sha256 = t.sha256;
    row.source = t.source;
    auto id = db_.AddTask(row);
    if (!id.ok()) return id.status();
    tasks_[id.value()] = t;
    for (int s = 0; s < options_.samples; ++s) {
      auto sample = db_.AddSample(id.value(), s);
      if (!sample.ok()) return sample.status();
      auto attempt = db_.AddAttempt(sample.value(), 1);
      if (!attempt.ok()) return attempt.status();
    }
  }
  return Status::Ok();
}

Result<GenerateSummary> Generator::Run(const std::vector<Task>& tasks,
                                       const std::function<void(const GenerateProgress&)>& on_progress) {
  const auto start = Clock::now();
  GenerateSummary summary;
  if (Status s = AddTasks(tasks); !s.ok()) return s;
  auto reopened = db_.ReopenMachineFailures();
  if (!reopened.ok()) return reopened.status();
  summary.reopened = reopened.value();
  // Every prompt first: a prompt without the asked variant stops the run before anything is sent.
  auto prompts = FirstTurnPrompts(prompt_, tasks, options_.backend, options_.format, options_.cache_dir);
  if (!prompts.ok()) return prompts.status();
  prompts_ = std::move(prompts).value();
  progress_ = {};
  for (int turn = 1; turn <= options_.turns; ++turn) {
    auto pending = PendingOfTurn(turn);
    if (!pending.ok()) return pending.status();
    progress_.to_generate += static_cast<int64_t>(pending.value().size());
    Ask(pending.value(), summary, on_progress);
    auto generated = Generated();
    if (!generated.ok()) return generated.status();
    progress_.to_judge += static_cast<int64_t>(generated.value().size());
    progress_.elapsed_seconds = Since(start);
    if (Status s = Judge(generated.value(), summary, on_progress); !s.ok()) return s;
    if (summary.stopped || turn == options_.turns) break;
    if (Status s = PlanNextTurn(turn); !s.ok()) return s;
  }
  return summary;
}

Result<std::vector<std::pair<AttemptRow, std::vector<ChatMessage>>>> Generator::PendingOfTurn(int turn) {
  auto attempts = db_.Attempts();
  if (!attempts.ok()) return attempts.status();
  std::map<int64_t, AttemptRow> before;  // By sample: its attempt of the turn before.
  for (const AttemptRow& a : attempts.value()) {
    if (a.turn == turn - 1) before[a.sample_id] = a;
  }
  std::vector<std::pair<AttemptRow, std::vector<ChatMessage>>> pending;
  for (const AttemptRow& a : attempts.value()) {
    if (a.state != AttemptState::kPending || a.turn != turn || !tasks_.count(a.task_id)) continue;
    auto messages = Messages(a, before);
    if (!messages.ok()) return messages.status();
    pending.emplace_back(a, std::move(messages).value());
  }
  return pending;
}

Result<std::vector<AttemptRow>> Generator::Generated() {
  auto attempts = db_.Attempts();
  if (!attempts.ok()) return attempts.status();
  std::vector<AttemptRow> generated;
  for (const AttemptRow& a : attempts.value()) {
    if (a.state == AttemptState::kGenerated && tasks_.count(a.task_id)) generated.push_back(a);
  }
  return generated;
}

Status Generator::PlanNextTurn(int turn) {
  auto attempts = db_.Attempts();
  if (!attempts.ok()) return attempts.status();
  for (const AttemptRow& a : attempts.value()) {
    if (a.turn != turn || !tasks_.count(a.task_id) || !NeedsAnotherTurn(a, options_.repair)) continue;
    if (auto next = db_.AddAttempt(a.sample_id, turn + 1); !next.ok()) return next.status();
  }
  return Status::Ok();
}

Result<std::vector<ChatMessage>> Generator::Messages(const AttemptRow& attempt,
                                                     const std::map<int64_t, AttemptRow>& before) {
  const std::vector<ChatMessage>& first = prompts_.at(tasks_.at(attempt.task_id).sha256);
  if (attempt.turn == 1) return first;
  const auto previous = before.find(attempt.sample_id);
  if (previous == before.end()) return first;  // No earlier turn on record: asked afresh.
  auto answered = db_.LastAnswered(previous->second.id);
  if (!answered.ok()) return answered.status();
  std::vector<ChatMessage> messages = first;
  std::string answer;
  if (answered.value()) {
    auto response = ParseChatResponse(answered.value()->response);
    if (response.ok() && !response.value().choices.empty()) answer = response.value().choices.front().content;
    if (options_.history == "full") {
      const nlohmann::json earlier = nlohmann::json::parse(answered.value()->messages_json, nullptr, false);
      if (earlier.is_array()) {
        messages.clear();
        for (const auto& m : earlier) messages.push_back({m.value("role", "user"), m.value("content", "")});
      }
    }
  }
  messages.push_back({"assistant", answer});
  messages.push_back({"user", RepairMessage(previous->second, options_.repair)});
  return messages;
}

void Generator::Ask(const std::vector<std::pair<AttemptRow, std::vector<ChatMessage>>>& pending,
                    GenerateSummary& summary, const std::function<void(const GenerateProgress&)>& on_progress) {
  const auto start = Clock::now();
  std::atomic<std::size_t> next{0};
  std::atomic<bool> stop{false};
  std::atomic<int64_t> tokens{0};
  std::mutex mu;  // summary, progress_, on_progress.
  auto halt = [&](const std::string& why) {
    std::lock_guard<std::mutex> lock(mu);
    if (!summary.stopped) {
      summary.stopped = true;
      summary.stop_reason = why;
    }
    stop = true;
  };
  auto work = [&] {
    while (!stop) {
      const std::size_t i = next++;
      if (i >= pending.size()) return;
      const auto& [a, messages] = pending[i];
      if (options_.max_total_tokens && tokens.load() >= *options_.max_total_tokens) {
        halt("the budget of " + std::to_string(*options_.max_total_tokens) +
             " completion tokens (--max-total-tokens) is used up");
        return;
      }
      ChatRequest request = options_.request;
      request.messages = messages;
      const std::string messages_json = MessagesJson(messages);
      const double queued = Since(start);
      const ModelCall call = client_.Complete(request);
      RequestRecord record = Record(messages_json, call);
      AnswerUpdate update = Update(call, options_.format, options_.backend);
      update.stage_seconds = {{"queue", queued}, {"generate", call.seconds}};
      const Status saved = db_.RecordAnswer(a.id, record, update);
      const int64_t used = record.completion_tokens.value_or(0);
      tokens += used;
      {
        std::lock_guard<std::mutex> lock(mu);
        ++summary.asked;
        if (call.ok()) ++summary.answered;
        summary.completion_tokens += used;
        ++progress_.generated;
        progress_.completion_tokens += used;
        progress_.elapsed_seconds = Since(start);
        if (on_progress) on_progress(progress_);
      }
      if (!saved.ok()) halt("cannot record an answer in the run database: " + saved.message());
      if (call.failure == ModelFailure::kUnreachable) halt(call.message);
    }
  };
  const int n = std::max(1, std::min<int>(options_.concurrency, static_cast<int>(pending.size())));
  std::vector<std::thread> threads;
  for (int t = 0; t < n; ++t) threads.emplace_back(work);
  for (auto& t : threads) t.join();
}

Status Generator::Judge(const std::vector<AttemptRow>& generated, GenerateSummary& summary,
                        const std::function<void(const GenerateProgress&)>& on_progress) {
  if (generated.empty()) return Status::Ok();
  std::vector<Job> jobs;
  std::vector<int64_t> attempt_ids;
  std::vector<std::string> keys;  // The verdict cache's, by job.
  Status failed = Status::Ok();
  auto record = [&](int64_t attempt_id, VerdictUpdate u, bool pass) {
    const Status s = db_.RecordVerdict(attempt_id, u);
    if (!s.ok() && failed.ok()) failed = Status::Error("cannot record a verdict in the run database: " + s.message());
    ++summary.judged;
    if (u.cached) ++summary.cached;
    ++progress_.judged;
    if (pass) ++progress_.passed;
    if (on_progress) on_progress(progress_);
  };
  for (const AttemptRow& a : generated) {
    const Task& task = tasks_.at(a.task_id);
    const std::string format = a.format.value_or(options_.format);
    const fs::path file = options_.candidates_dir / ("level" + std::to_string(task.level)) / task.name /
                          ("sample" + std::to_string(a.sample) + "_turn" + std::to_string(a.turn) +
                           CandidateExtension(format, options_.backend));
    std::error_code ec;
    fs::create_directories(file.parent_path(), ec);
    if (Status s = WriteFileAtomic(file, a.code.value_or("")); !s.ok()) {
      return Status::Error("cannot write the candidate " + file.string() + ": " + s.message());
    }
    std::string key;
    if (options_.verdict_cache != nullptr) {
      VerdictKeyParts parts = options_.verdict_key;
      parts.task_sha256 = task.sha256;
      parts.format = format;
      parts.candidate_text = a.code.value_or("");
      key = VerdictCacheKey(parts);
      if (auto hit = options_.verdict_cache->Lookup(key, file.string())) {
        const nlohmann::json v = nlohmann::json::parse(*hit, nullptr, false);
        VerdictUpdate u;
        u.outcome = v.value("status", "infra_error");
        u.verdict_json = *hit;
        if (v.contains("reward") && v["reward"].is_number()) u.reward = v["reward"].get<double>();
        u.cached = true;
        u.stage_seconds["judge"] = 0;
        record(a.id, u, u.outcome == "pass");
        continue;
      }
    }
    jobs.push_back({task, file, ""});
    attempt_ids.push_back(a.id);
    keys.push_back(key);
  }
  std::map<std::string, std::size_t> index;  // Candidate path to job.
  for (std::size_t i = 0; i < jobs.size(); ++i) index[jobs[i].candidate.string()] = i;
  RunJobs(evaluators_, jobs, options_.batch, [&](const Job& job, const Verdict& v, const Progress&) {
    const std::size_t i = index.at(job.candidate.string());
    VerdictUpdate u;
    u.outcome = StatusName(v.status);
    u.verdict_json = VerdictToJson(v, -1);
    u.reward = v.reward;
    u.stage_seconds = v.stage_seconds;
    u.stage_seconds["judge"] = v.seconds;
    if (options_.verdict_cache != nullptr && !keys[i].empty() && VerdictCacheable(u.outcome)) {
      (void)options_.verdict_cache->Store(keys[i], u.verdict_json);  // A cache that cannot be written only costs time.
    }
    record(attempt_ids[i], u, v.status == VerdictStatus::kPass);
  });
  return failed;
}

}  // namespace anvil
