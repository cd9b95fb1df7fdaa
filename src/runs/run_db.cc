#include "runs/run_db.h"

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>

#include "runs/run_schema.h"  // Generated from schema_v1.sql: kRunSchemaV1.
#include "runs/sqlite.h"

namespace anvil {
namespace {

double Now() { return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count(); }

// Propagates an error Status from an expression.
#define ANVIL_RETURN_IF_ERROR(expr)    \
  do {                                 \
    const Status status_ = (expr);     \
    if (!status_.ok()) return status_; \
  } while (0)

AttemptState StateFromName(const std::string& name) {
  if (name == "generated") return AttemptState::kGenerated;
  if (name == "done") return AttemptState::kDone;
  return AttemptState::kPending;
}

// Sampling settings compare as JSON values, not texts.
bool SameJson(const std::string& a, const std::string& b) {
  const auto ja = nlohmann::json::parse(a, nullptr, false), jb = nlohmann::json::parse(b, nullptr, false);
  return !ja.is_discarded() && !jb.is_discarded() ? ja == jb : a == b;
}

// The first column of the statement's one row: an id found by a SELECT.
Result<int64_t> SingleInt(Statement& s) {
  auto row = s.Step();
  if (!row.ok()) return row.status();
  if (!row.value()) return Status::Error("the run database lost a row it had just written");
  return s.Int(0);
}

// Inside the caller's transaction.
Status RecordStageTimes(Sqlite& db, int64_t attempt_id, const std::map<std::string, double>& stage_seconds) {
  for (const auto& [stage, seconds] : stage_seconds) {
    auto s = db.Prepare(
        "INSERT INTO stage_time (attempt_id, stage, seconds) VALUES (?1, ?2, ?3) "
        "ON CONFLICT (attempt_id, stage) DO UPDATE SET seconds = excluded.seconds");
    if (!s.ok()) return s.status();
    s.value().Bind(1, attempt_id).Bind(2, stage).Bind(3, seconds);
    ANVIL_RETURN_IF_ERROR(s.value().Run());
  }
  return Status::Ok();
}

}  // namespace

const char* AttemptStateName(AttemptState state) {
  switch (state) {
    case AttemptState::kPending:
      return "pending";
    case AttemptState::kGenerated:
      return "generated";
    case AttemptState::kDone:
      return "done";
  }
  return "pending";
}

// Each version's additions to the one before (docs/run-db.md), from version 2 on.
constexpr const char* kAdditions[] = {
    "ALTER TABLE request ADD COLUMN choice INTEGER NOT NULL DEFAULT 0;",  // 2
    "ALTER TABLE sample ADD COLUMN prime_echo REAL;",                     // 3
};

// The statements that move a database from `version` to kRunDbVersion.
std::string Upgrade(int64_t version) {
  std::string sql = "BEGIN IMMEDIATE;\n";
  if (version == 0) sql += std::string(kRunSchemaV1) + "\n";
  for (int64_t v = std::max<int64_t>(version, 1) + 1; v <= kRunDbVersion; ++v)
    sql += std::string(kAdditions[v - 2]) + "\n";
  return sql + "PRAGMA user_version = " + std::to_string(kRunDbVersion) + ";\nCOMMIT;";
}

RunDb::RunDb(std::unique_ptr<Sqlite> db, int64_t version)
    : db_(std::move(db)), has_choice_(version >= 2), has_prime_echo_(version >= 3) {}
RunDb::~RunDb() = default;

Result<std::unique_ptr<RunDb>> RunDb::Open(const std::filesystem::path& path, bool create, bool read_only) {
  std::error_code ec;
  const bool existed = std::filesystem::exists(path, ec);
  if (!existed && !create) return Status::Error("no run database at " + path.string());
  auto db = Sqlite::Open(path, create && !existed, read_only && existed);
  if (!db.ok()) return db.status();
  Sqlite& s = *db.value();
  auto version = s.UserVersion();
  if (!version.ok()) return Status::Error(path.string() + " is not a run database (" + version.message() + ")");
  if (version.value() > kRunDbVersion) {
    return Status::Error(path.string() + " was written by a newer anvil (run database version " +
                         std::to_string(version.value()) + "; this anvil reads up to " + std::to_string(kRunDbVersion) +
                         ")");
  }
  if (version.value() == 0) {
    {  // Finalized before the schema is written: an open read holds a transaction.
      auto tables = s.Prepare("SELECT count(*) FROM sqlite_schema");
      if (!tables.ok()) return tables.status();
      auto row = tables.value().Step();
      if (!row.ok()) return row.status();
      if (tables.value().Int(0) != 0) {
        return Status::Error(path.string() + " is an SQLite file but not a run database");
      }
    }
    if (read_only) return Status::Error(path.string() + " is an empty run database");
    ANVIL_RETURN_IF_ERROR(s.Exec("PRAGMA journal_mode = WAL"));
    ANVIL_RETURN_IF_ERROR(s.Exec(Upgrade(0)));
  } else if (version.value() < kRunDbVersion && !read_only) {
    ANVIL_RETURN_IF_ERROR(s.Exec(Upgrade(version.value())));
  }
  if (!read_only) ANVIL_RETURN_IF_ERROR(s.Exec("PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL"));
  const int64_t now = read_only && version.value() != 0 ? version.value() : kRunDbVersion;
  return std::unique_ptr<RunDb>(new RunDb(std::move(db).value(), now));
}

Result<RunInfo> RunDb::InfoLocked() {
  auto s = db_->Prepare(
      "SELECT model, endpoint, prompt_id, prompt_version, backend, samples, turns, sampling_json, config_json, "
      "created_at, anvil_version FROM run WHERE id = 1");
  if (!s.ok()) return s.status();
  auto row = s.value().Step();
  if (!row.ok()) return row.status();
  if (!row.value()) return Status::Error("the run database holds no run yet");
  const Statement& r = s.value();
  RunInfo info;
  info.model = r.Text(0);
  info.endpoint = r.Text(1);
  info.prompt_id = r.Text(2);
  info.prompt_version = r.Int(3);
  info.backend = r.Text(4);
  info.samples = r.Int(5);
  info.turns = r.Int(6);
  info.sampling_json = r.Text(7);
  info.config_json = r.Text(8);
  info.created_at = r.Real(9);
  info.anvil_version = r.Text(10);
  return info;
}

Result<RunInfo> RunDb::Info() {
  std::lock_guard<std::mutex> lock(mu_);
  return InfoLocked();
}

Result<RunInfo> RunDb::BeginRun(const RunInfo& info) {
  std::lock_guard<std::mutex> lock(mu_);
  auto existing = InfoLocked();
  if (!existing.ok()) {
    auto s = db_->Prepare(
        "INSERT INTO run (id, created_at, anvil_version, model, endpoint, prompt_id, prompt_version, backend, "
        "samples, turns, sampling_json, config_json) VALUES (1, ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)");
    if (!s.ok()) return s.status();
    s.value()
        .Bind(1, Now())
        .Bind(2, std::string(ANVIL_VERSION))
        .Bind(3, info.model)
        .Bind(4, info.endpoint)
        .Bind(5, info.prompt_id)
        .Bind(6, info.prompt_version)
        .Bind(7, info.backend)
        .Bind(8, info.samples)
        .Bind(9, info.turns)
        .Bind(10, info.sampling_json)
        .Bind(11, info.config_json);
    ANVIL_RETURN_IF_ERROR(s.value().Run());
    return InfoLocked();
  }
  const RunInfo& was = existing.value();
  std::string differs;
  auto compare = [&](const char* what, const std::string& recorded, const std::string& asked) {
    if (recorded != asked)
      differs += std::string("\n  ") + what + ": the run has '" + recorded + "', asked '" + asked + "'";
  };
  compare("model", was.model, info.model);
  compare("prompt", was.prompt_id + " v" + std::to_string(was.prompt_version),
          info.prompt_id + " v" + std::to_string(info.prompt_version));
  compare("backend", was.backend, info.backend);
  if (!SameJson(was.sampling_json, info.sampling_json)) compare("sampling", was.sampling_json, info.sampling_json);
  if (!SameJson(was.config_json, info.config_json)) compare("settings", was.config_json, info.config_json);
  if (!differs.empty()) {
    return Status::Error(
        "this run was made with other settings; resume it with the same ones, or start a new run "
        "with another --out:" +
        differs);
  }
  if (info.samples > was.samples || info.turns > was.turns) {
    auto s = db_->Prepare("UPDATE run SET samples = max(samples, ?1), turns = max(turns, ?2) WHERE id = 1");
    if (!s.ok()) return s.status();
    s.value().Bind(1, info.samples).Bind(2, info.turns);
    ANVIL_RETURN_IF_ERROR(s.value().Run());
  }
  return InfoLocked();
}

Result<int64_t> RunDb::AddTask(const TaskRow& task) {
  std::lock_guard<std::mutex> lock(mu_);
  auto insert = db_->Prepare(
      "INSERT INTO task (name, level, problem, path, sha256, source) VALUES (?1, ?2, ?3, ?4, ?5, ?6) "
      "ON CONFLICT (level, name, sha256) DO NOTHING");
  if (!insert.ok()) return insert.status();
  insert.value()
      .Bind(1, task.name)
      .Bind(2, task.level)
      .Bind(3, task.problem)
      .Bind(4, task.path)
      .Bind(5, task.sha256)
      .Bind(6, task.source);
  ANVIL_RETURN_IF_ERROR(insert.value().Run());
  auto find = db_->Prepare("SELECT id FROM task WHERE level = ?1 AND name = ?2 AND sha256 = ?3");
  if (!find.ok()) return find.status();
  find.value().Bind(1, task.level).Bind(2, task.name).Bind(3, task.sha256);
  return SingleInt(find.value());
}

Result<std::vector<TaskRow>> RunDb::Tasks() {
  std::lock_guard<std::mutex> lock(mu_);
  auto s = db_->Prepare("SELECT id, name, level, problem, path, sha256, source FROM task ORDER BY id");
  if (!s.ok()) return s.status();
  std::vector<TaskRow> tasks;
  while (true) {
    auto row = s.value().Step();
    if (!row.ok()) return row.status();
    if (!row.value()) return tasks;
    const Statement& r = s.value();
    tasks.push_back({r.Int(0), r.Text(1), r.Int(2), r.MaybeInt(3), r.Text(4), r.Text(5), r.Text(6)});
  }
}

Result<int64_t> RunDb::AddSample(int64_t task_id, int64_t index) {
  std::lock_guard<std::mutex> lock(mu_);
  auto insert = db_->Prepare("INSERT INTO sample (task_id, idx) VALUES (?1, ?2) ON CONFLICT DO NOTHING");
  if (!insert.ok()) return insert.status();
  insert.value().Bind(1, task_id).Bind(2, index);
  ANVIL_RETURN_IF_ERROR(insert.value().Run());
  auto find = db_->Prepare("SELECT id FROM sample WHERE task_id = ?1 AND idx = ?2");
  if (!find.ok()) return find.status();
  find.value().Bind(1, task_id).Bind(2, index);
  return SingleInt(find.value());
}

Result<int64_t> RunDb::AddAttempt(int64_t sample_id, int64_t turn) {
  std::lock_guard<std::mutex> lock(mu_);
  auto insert = db_->Prepare(
      "INSERT INTO attempt (sample_id, turn, state, created_at) VALUES (?1, ?2, 'pending', ?3) "
      "ON CONFLICT DO NOTHING");
  if (!insert.ok()) return insert.status();
  insert.value().Bind(1, sample_id).Bind(2, turn).Bind(3, Now());
  ANVIL_RETURN_IF_ERROR(insert.value().Run());
  auto find = db_->Prepare("SELECT id FROM attempt WHERE sample_id = ?1 AND turn = ?2");
  if (!find.ok()) return find.status();
  find.value().Bind(1, sample_id).Bind(2, turn);
  return SingleInt(find.value());
}

Result<std::vector<AttemptRow>> RunDb::Attempts() {
  std::lock_guard<std::mutex> lock(mu_);
  auto s = db_->Prepare(
      "SELECT a.id, a.sample_id, s.task_id, s.idx, a.turn, a.state, a.outcome, a.code, a.format, a.verdict_json, "
      "a.reward, a.cached, " +
      std::string(has_prime_echo_ ? "s.prime_echo" : "NULL") +
      " FROM attempt a JOIN sample s ON s.id = a.sample_id ORDER BY s.task_id, s.idx, a.turn");
  if (!s.ok()) return s.status();
  std::vector<AttemptRow> attempts;
  while (true) {
    auto row = s.value().Step();
    if (!row.ok()) return row.status();
    if (!row.value()) return attempts;
    const Statement& r = s.value();
    AttemptRow a;
    a.id = r.Int(0);
    a.sample_id = r.Int(1);
    a.task_id = r.Int(2);
    a.sample = r.Int(3);
    a.turn = r.Int(4);
    a.state = StateFromName(r.Text(5));
    a.outcome = r.MaybeText(6);
    a.code = r.MaybeText(7);
    a.format = r.MaybeText(8);
    a.verdict_json = r.MaybeText(9);
    a.reward = r.MaybeReal(10);
    a.cached = r.Int(11) != 0;
    a.prime_echo = r.MaybeReal(12);
    attempts.push_back(std::move(a));
  }
}

Result<std::optional<RunDb::Answered>> RunDb::LastAnswered(int64_t attempt_id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto s = db_->Prepare(
      std::string("SELECT messages_json, response, ") + (has_choice_ ? "choice" : "0") +
      " FROM request WHERE attempt_id = ?1 AND failure = 'none' AND response IS NOT NULL ORDER BY id DESC LIMIT 1");
  if (!s.ok()) return s.status();
  s.value().Bind(1, attempt_id);
  auto row = s.value().Step();
  if (!row.ok()) return row.status();
  if (!row.value()) return std::optional<Answered>();
  return std::optional<Answered>(Answered{s.value().Text(0), s.value().Text(1), s.value().Int(2)});
}

Status RunDb::RecordAnswer(int64_t attempt_id, const RequestRecord& q, const AnswerUpdate& update) {
  std::lock_guard<std::mutex> lock(mu_);
  SqliteTransaction t(*db_);
  ANVIL_RETURN_IF_ERROR(t.begun());
  auto insert = db_->Prepare(
      "INSERT INTO request (attempt_id, messages_json, response, http_status, failure, message, finish_reason, "
      "prompt_tokens, completion_tokens, reasoning_tokens, attempts, latency_s, logprobs_json, token_ids_json, "
      "created_at, choice) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)");
  if (!insert.ok()) return insert.status();
  insert.value()
      .Bind(1, attempt_id)
      .Bind(2, q.messages_json)
      .Bind(3, q.response)
      .Bind(4, q.http_status)
      .Bind(5, q.failure)
      .Bind(6, q.message)
      .Bind(7, q.finish_reason)
      .Bind(8, q.prompt_tokens)
      .Bind(9, q.completion_tokens)
      .Bind(10, q.reasoning_tokens)
      .Bind(11, q.attempts)
      .Bind(12, q.latency_s)
      .Bind(13, q.logprobs_json)
      .Bind(14, q.token_ids_json)
      .Bind(15, Now())
      .Bind(16, q.choice);
  ANVIL_RETURN_IF_ERROR(insert.value().Run());
  auto set = db_->Prepare(
      "UPDATE attempt SET state = ?2, code = ?3, format = ?4, outcome = ?5, reward = ?6, "
      "done_at = CASE WHEN ?2 = 'done' THEN ?7 ELSE NULL END WHERE id = ?1");
  if (!set.ok()) return set.status();
  set.value()
      .Bind(1, attempt_id)
      .Bind(2, std::string(AttemptStateName(update.state)))
      .Bind(3, update.code)
      .Bind(4, update.format)
      .Bind(5, update.outcome)
      .Bind(6, update.reward)
      .Bind(7, Now());
  ANVIL_RETURN_IF_ERROR(set.value().Run());
  ANVIL_RETURN_IF_ERROR(RecordStageTimes(*db_, attempt_id, update.stage_seconds));
  return t.Commit();
}

Status RunDb::RecordVerdict(int64_t attempt_id, const VerdictUpdate& v) {
  std::lock_guard<std::mutex> lock(mu_);
  SqliteTransaction t(*db_);
  ANVIL_RETURN_IF_ERROR(t.begun());
  auto set = db_->Prepare(
      "UPDATE attempt SET state = 'done', outcome = ?2, verdict_json = ?3, reward = ?4, cached = ?5, done_at = ?6 "
      "WHERE id = ?1");
  if (!set.ok()) return set.status();
  set.value()
      .Bind(1, attempt_id)
      .Bind(2, v.outcome)
      .Bind(3, v.verdict_json)
      .Bind(4, v.reward)
      .Bind(5, static_cast<int64_t>(v.cached ? 1 : 0))
      .Bind(6, Now());
  ANVIL_RETURN_IF_ERROR(set.value().Run());
  ANVIL_RETURN_IF_ERROR(RecordStageTimes(*db_, attempt_id, v.stage_seconds));
  return t.Commit();
}

Result<std::vector<std::optional<double>>> RunDb::TurnRewards(int64_t sample_id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto s = db_->Prepare("SELECT reward FROM attempt WHERE sample_id = ?1 AND state = 'done' ORDER BY turn");
  if (!s.ok()) return s.status();
  s.value().Bind(1, sample_id);
  std::vector<std::optional<double>> rewards;
  while (true) {
    auto row = s.value().Step();
    if (!row.ok()) return row.status();
    if (!row.value()) return rewards;
    rewards.push_back(s.value().MaybeReal(0));
  }
}

Result<std::map<int64_t, std::map<std::string, double>>> RunDb::StageTimes() {
  std::lock_guard<std::mutex> lock(mu_);
  auto s = db_->Prepare("SELECT attempt_id, stage, seconds FROM stage_time");
  if (!s.ok()) return s.status();
  std::map<int64_t, std::map<std::string, double>> times;
  while (true) {
    auto row = s.value().Step();
    if (!row.ok()) return row.status();
    if (!row.value()) return times;
    times[s.value().Int(0)][s.value().Text(1)] = s.value().Real(2);
  }
}

Status RunDb::RecordPrimeEcho(int64_t sample_id, std::optional<double> score) {
  std::lock_guard<std::mutex> lock(mu_);
  auto set = db_->Prepare("UPDATE sample SET prime_echo = ?2 WHERE id = ?1");
  if (!set.ok()) return set.status();
  set.value().Bind(1, sample_id).Bind(2, score);
  return set.value().Run();
}

Result<int64_t> RunDb::ReopenMachineFailures() {
  std::lock_guard<std::mutex> lock(mu_);
  SqliteTransaction t(*db_);
  ANVIL_RETURN_IF_ERROR(t.begun());
  ANVIL_RETURN_IF_ERROR(
      db_->Exec("UPDATE attempt SET state = 'pending', outcome = NULL, reward = NULL, done_at = NULL "
                "WHERE state = 'done' AND outcome = 'server_error'"));
  int64_t reopened = db_->Changes();
  ANVIL_RETURN_IF_ERROR(db_->Exec(
      "UPDATE attempt SET state = 'generated', outcome = NULL, verdict_json = NULL, reward = NULL, done_at = NULL "
      "WHERE state = 'done' AND outcome = 'infra_error'"));
  reopened += db_->Changes();
  ANVIL_RETURN_IF_ERROR(t.Commit());
  return reopened;
}

Status RunDb::Checkpoint() {
  std::lock_guard<std::mutex> lock(mu_);
  return db_->Exec("PRAGMA wal_checkpoint(TRUNCATE)");
}

}  // namespace anvil
