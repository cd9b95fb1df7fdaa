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

// The request's record for the attempt its choice `choice` answers: the raw
// answer as it came, whatever became of it. The request's token counts go
// with choice 0 alone (they are the whole request's).
RequestRecord Record(const std::string& messages_json, const ModelCall& call, std::size_t choice) {
  RequestRecord q;
  q.messages_json = messages_json;
  if (call.http_status != 0) q.response = call.body;
  q.http_status = call.http_status;
  q.failure = ModelFailureName(call.failure);
  q.message = call.message;
  q.attempts = call.attempts;
  q.latency_s = call.seconds;
  q.choice = static_cast<int64_t>(choice);
  if (call.ok() && choice >= call.response->choices.size()) {  // The server ignored n.
    q.failure = "bad_answer";
    q.message = "the request asked for more choices (n) than the " + std::to_string(call.response->choices.size()) +
                " the server gave: it may not support n (leave out --n-per-request)";
  }
  if (call.response && choice < call.response->choices.size()) {
    const ChatChoice& c = call.response->choices[choice];
    q.finish_reason = c.finish_reason;
    if (!c.logprobs.empty()) {
      nlohmann::json lp = nlohmann::json::array();
      for (const TokenLogprob& t : c.logprobs) lp.push_back({{"token", t.token}, {"logprob", t.logprob}});
      q.logprobs_json = lp.dump();
    }
    if (!c.token_ids.empty()) q.token_ids_json = nlohmann::json(c.token_ids).dump();
  }
  if (call.response && call.response->usage && choice == 0) {
    q.prompt_tokens = call.response->usage->prompt;
    q.completion_tokens = call.response->usage->completion;
    q.reasoning_tokens = call.response->usage->reasoning;
  }
  return q;
}

// What choice `choice` of an answer makes of its attempt.
AnswerUpdate Update(const ModelCall& call, std::size_t choice, const std::string& format, const std::string& backend) {
  AnswerUpdate u;
  // The machine's: no reward, asked again on a rerun. A server that gives
  // fewer choices than asked (it ignores `n`) leaves the others unanswered.
  if (!call.ok() || choice >= call.response->choices.size()) {
    u.state = AttemptState::kDone;
    u.outcome = "server_error";
    return u;
  }
  const ExtractedAnswer a = ExtractAnswer(call.response->choices[choice], format, backend);
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
  start_ = Clock::now();
  on_progress_ = on_progress;
  if (Status s = AddTasks(tasks); !s.ok()) return s;
  auto reopened = db_.ReopenMachineFailures();
  if (!reopened.ok()) return reopened.status();
  summary_.reopened = reopened.value();
  // Every prompt first: a prompt without the asked variant stops the run before anything is sent.
  auto prompts = FirstTurnPrompts(prompt_, tasks, options_.backend, options_.format, options_.cache_dir);
  if (!prompts.ok()) return prompts.status();
  prompts_ = std::move(prompts).value();
  if (Status s = PlanMissingTurns(); !s.ok()) return s;
  JobStream judges(evaluators_, options_.batch);
  if (Status s = Resume(judges); !s.ok()) return s;
  // As many askers as requests may be in flight: repair turns are queued
  // while the run goes on, also when no first turn is pending.
  std::vector<std::thread> askers;
  for (int t = 0; t < std::max(1, options_.concurrency); ++t)
    askers.emplace_back(&Generator::AskLoop, this, std::ref(judges));
  {
    std::unique_lock<std::mutex> lock(mu_);
    changed_.wait(lock, [&] { return open_ == 0; });
    over_ = true;
  }
  changed_.notify_all();
  for (auto& t : askers) t.join();
  judges.Finish();
  if (!failure_.empty()) return Status::Error(failure_);
  return summary_;
}

Status Generator::Resume(JobStream& judges) {
  auto attempts = db_.Attempts();
  if (!attempts.ok()) return attempts.status();
  std::map<std::pair<int64_t, int64_t>, AttemptRow> by_turn;  // (sample, turn) -> attempt.
  for (const AttemptRow& a : attempts.value()) by_turn[{a.sample_id, a.turn}] = a;
  std::vector<Request> pending;
  std::map<int64_t, std::size_t> sharing;  // By task: its first turns' request that takes more (n).
  for (const AttemptRow& a : attempts.value()) {
    if (!tasks_.count(a.task_id)) continue;
    if (a.state == AttemptState::kGenerated) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        ++open_;
        ++progress_.to_judge;
      }
      Judge(a, judges);
      continue;
    }
    if (a.state != AttemptState::kPending) continue;
    const auto before = by_turn.find({a.sample_id, a.turn - 1});
    const AttemptRow* previous = before == by_turn.end() ? nullptr : &before->second;
    if (a.turn == 1 || previous == nullptr) {  // The task's first-turn prompt: one request may ask for several.
      const auto open = sharing.find(a.task_id);
      if (open != sharing.end() && static_cast<int>(pending[open->second].attempts.size()) < options_.n_per_request) {
        pending[open->second].attempts.push_back(a);
        continue;
      }
      sharing[a.task_id] = pending.size();
    }
    auto messages = Messages(a, previous);
    if (!messages.ok()) return messages.status();
    pending.push_back({{a}, std::move(messages).value()});
  }
  for (Request& r : pending) Queue(std::move(r));
  return Status::Ok();
}

Status Generator::PlanMissingTurns() {
  auto attempts = db_.Attempts();
  if (!attempts.ok()) return attempts.status();
  std::map<int64_t, AttemptRow> latest;  // By sample.
  for (const AttemptRow& a : attempts.value()) {
    auto [it, added] = latest.emplace(a.sample_id, a);
    if (!added && a.turn > it->second.turn) it->second = a;
  }
  for (const auto& [sample, a] : latest) {
    if (a.turn >= options_.turns || !tasks_.count(a.task_id) || !NeedsAnotherTurn(a, options_.repair)) continue;
    if (auto next = db_.AddAttempt(sample, a.turn + 1); !next.ok()) return next.status();
  }
  return Status::Ok();
}

Result<std::vector<ChatMessage>> Generator::Messages(const AttemptRow& attempt, const AttemptRow* before) {
  const std::vector<ChatMessage>& first = prompts_.at(tasks_.at(attempt.task_id).sha256);
  if (attempt.turn == 1 || before == nullptr) return first;  // No earlier turn on record: asked afresh.
  auto answered = db_.LastAnswered(before->id);
  if (!answered.ok()) return answered.status();
  std::vector<ChatMessage> messages = first;
  std::string answer;
  if (answered.value()) {
    auto response = ParseChatResponse(answered.value()->response);
    const std::size_t choice = static_cast<std::size_t>(answered.value()->choice);
    if (response.ok() && choice < response.value().choices.size()) answer = response.value().choices[choice].content;
    if (options_.history == "full") {
      const nlohmann::json earlier = nlohmann::json::parse(answered.value()->messages_json, nullptr, false);
      if (earlier.is_array()) {
        messages.clear();
        for (const auto& m : earlier) messages.push_back({m.value("role", "user"), m.value("content", "")});
      }
    }
  }
  messages.push_back({"assistant", answer});
  messages.push_back({"user", RepairMessage(*before, options_.repair)});
  return messages;
}

void Generator::AskLoop(JobStream& judges) {
  while (true) {
    Request r;
    {
      std::unique_lock<std::mutex> lock(mu_);
      changed_.wait(lock, [&] { return over_ || (!requests_.empty()); });
      if (requests_.empty()) return;
      r = std::move(requests_.front());
      requests_.pop_front();
      if (!stopping_ && options_.max_total_tokens && tokens_ >= *options_.max_total_tokens) {
        lock.unlock();
        Halt("the budget of " + std::to_string(*options_.max_total_tokens) +
             " completion tokens (--max-total-tokens) is used up");
        lock.lock();
      }
      if (stopping_) {  // Left pending, for a rerun.
        lock.unlock();
        for (std::size_t i = 0; i < r.attempts.size(); ++i) Close();
        continue;
      }
    }
    ChatRequest request = options_.request;
    request.messages = r.messages;
    request.sampling.n = static_cast<int>(r.attempts.size());
    const std::string messages_json = MessagesJson(r.messages);
    const double queued = Since(r.queued_at);  // Waiting for a free request slot (--concurrency).
    const ModelCall call = client_.Complete(request);
    if (call.failure == ModelFailure::kUnreachable) Halt(call.message);
    for (std::size_t i = 0; i < r.attempts.size(); ++i) Answered(r.attempts[i], messages_json, call, i, queued, judges);
  }
}

void Generator::Answered(AttemptRow a, const std::string& messages_json, const ModelCall& call, std::size_t choice,
                         double queued, JobStream& judges) {
  const RequestRecord record = Record(messages_json, call, choice);
  AnswerUpdate update = Update(call, choice, options_.format, options_.backend);
  update.stage_seconds = {{"queue", queued}, {"generate", call.seconds}};
  const Status saved = db_.RecordAnswer(a.id, record, update);
  const int64_t used = record.completion_tokens.value_or(0);
  {
    std::lock_guard<std::mutex> lock(mu_);
    tokens_ += used;
    if (choice == 0) ++summary_.asked;
    if (call.ok() && choice < call.response->choices.size()) ++summary_.answered;
    summary_.completion_tokens += used;
    ++progress_.generated;
    progress_.completion_tokens += used;
    if (saved.ok() && update.state == AttemptState::kGenerated) ++progress_.to_judge;
    Report();
  }
  if (!saved.ok()) {
    Fail("cannot record an answer in the run database: " + saved.message());
    Close();
    return;
  }
  a.state = update.state;
  a.code = update.code;
  a.format = update.format;
  a.outcome = update.outcome;
  a.reward = update.reward;
  if (a.state == AttemptState::kGenerated) {
    Judge(a, judges);  // Its work goes on there.
  } else {
    FollowUp(a);
  }
}

void Generator::Judge(const AttemptRow& a, JobStream& judges) {
  const Task& task = tasks_.at(a.task_id);
  const std::string format = a.format.value_or(options_.format);
  const fs::path file = options_.candidates_dir / ("level" + std::to_string(task.level)) / task.name /
                        ("sample" + std::to_string(a.sample) + "_turn" + std::to_string(a.turn) +
                         CandidateExtension(format, options_.backend));
  std::error_code ec;
  fs::create_directories(file.parent_path(), ec);
  if (Status s = WriteFileAtomic(file, a.code.value_or("")); !s.ok()) {
    Fail("cannot write the candidate " + file.string() + ": " + s.message());
    Close();
    return;
  }
  if (evaluators_.empty()) {
    Fail("no evaluator to judge " + file.string() + " with");
    Close();
    return;
  }
  std::string key;
  if (options_.verdict_cache != nullptr) {
    VerdictKeyParts parts = options_.verdict_key;
    parts.task_sha256 = task.sha256;
    parts.format = format;
    parts.candidate_text = a.code.value_or("");
    key = VerdictCacheKey(parts);
    if (AnswerFromCache(a, key, file)) return;
    std::lock_guard<std::mutex> lock(mu_);
    auto [judging, first] = judging_.try_emplace(key);
    if (!first) {  // The same candidate is being judged: its verdict answers this one too.
      judging->second.push_back({a, file});
      return;
    }
  }
  Submit(a, key, file, judges);
}

bool Generator::AnswerFromCache(const AttemptRow& a, const std::string& key, const fs::path& file) {
  auto hit = options_.verdict_cache->Lookup(key, file.string());
  if (!hit) return false;
  const nlohmann::json v = nlohmann::json::parse(*hit, nullptr, false);
  VerdictUpdate u;
  u.outcome = v.value("status", "infra_error");
  u.verdict_json = *hit;
  if (v.contains("reward") && v["reward"].is_number()) u.reward = v["reward"].get<double>();
  u.cached = true;
  u.stage_seconds["judge"] = 0;
  Judged(a, u);
  return true;
}

void Generator::Submit(const AttemptRow& a, const std::string& key, const fs::path& file, JobStream& judges) {
  judges.Submit({tasks_.at(a.task_id), file, ""}, [this, a, key, &judges](const Job&, Verdict v) {
    VerdictUpdate u;
    u.outcome = StatusName(v.status);
    u.verdict_json = VerdictToJson(v, -1);
    u.reward = v.reward;
    u.stage_seconds = v.stage_seconds;
    u.stage_seconds["judge"] = v.seconds;
    if (!key.empty() && VerdictCacheable(u.outcome)) {
      (void)options_.verdict_cache->Store(key, u.verdict_json);  // A cache that cannot be written only costs time.
    }
    Judged(a, u);
    if (key.empty()) return;
    std::vector<std::pair<AttemptRow, fs::path>> waiting;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (auto it = judging_.find(key); it != judging_.end()) {
        waiting = std::move(it->second);
        judging_.erase(it);
      }
    }
    // From the cache, or (a verdict that is not cached: timeout, infra_error) each judged on its own.
    for (const auto& [w, w_file] : waiting) {
      if (!AnswerFromCache(w, key, w_file)) Submit(w, "", w_file, judges);
    }
  });
}

void Generator::Judged(AttemptRow a, const VerdictUpdate& u) {
  const Status s = db_.RecordVerdict(a.id, u);
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++summary_.judged;
    if (u.cached) ++summary_.cached;
    ++progress_.judged;
    if (u.outcome == "pass") ++progress_.passed;
    Report();
  }
  if (!s.ok()) {
    Fail("cannot record a verdict in the run database: " + s.message());
    Close();
    return;
  }
  a.state = AttemptState::kDone;
  a.outcome = u.outcome;
  a.verdict_json = u.verdict_json;
  a.reward = u.reward;
  a.cached = u.cached;
  FollowUp(a);
}

void Generator::FollowUp(const AttemptRow& done) {
  if (options_.prime_echo) {
    auto rewards = db_.TurnRewards(done.sample_id);
    const Status s = rewards.ok()
                         ? db_.RecordPrimeEcho(done.sample_id, PrimeEcho(rewards.value(), *options_.prime_echo))
                         : rewards.status();
    if (!s.ok()) Fail("cannot record a PrimeEcho score in the run database: " + s.message());
  }
  bool stopping;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping = stopping_;
  }
  // A stopped run plans the next turn on its rerun (PlanMissingTurns).
  if (!stopping && done.turn < options_.turns && NeedsAnotherTurn(done, options_.repair)) {
    auto id = db_.AddAttempt(done.sample_id, done.turn + 1);
    if (!id.ok()) {
      Fail("cannot add a turn to the run database: " + id.message());
    } else {
      AttemptRow next;
      next.id = id.value();
      next.sample_id = done.sample_id;
      next.task_id = done.task_id;
      next.sample = done.sample;
      next.turn = done.turn + 1;
      auto messages = Messages(next, &done);
      if (!messages.ok()) {
        Fail(messages.message());
      } else {
        Queue({{next}, std::move(messages).value()});
      }
    }
  }
  Close();
}

void Generator::Queue(Request request) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    request.queued_at = Clock::now();
    open_ += static_cast<int64_t>(request.attempts.size());
    progress_.to_generate += static_cast<int64_t>(request.attempts.size());
    requests_.push_back(std::move(request));
  }
  changed_.notify_all();
}

void Generator::Close() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    --open_;
  }
  changed_.notify_all();
}

void Generator::Halt(const std::string& why) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!summary_.stopped) {
    summary_.stopped = true;
    summary_.stop_reason = why;
  }
  stopping_ = true;
}

void Generator::Fail(const std::string& message) {
  std::lock_guard<std::mutex> lock(mu_);
  if (failure_.empty()) failure_ = message;
  stopping_ = true;
}

void Generator::Report() {
  progress_.elapsed_seconds = Since(start_);
  if (on_progress_) on_progress_(progress_);
}

}  // namespace anvil
