// The run database (docs/run-db.md): one SQLite file per `anvil generate`
// run holding the run's settings, its tasks, samples, attempts, every request
// with its raw answer, and where each attempt's time went. This module owns
// the schema (src/runs/schema_v1.sql, embedded), its PRAGMA user_version and
// the only SQL of the run database in C++. Thread-safe: every call holds the
// object's mutex; an answer and its attempt's new state commit together.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"

namespace anvil {

class Sqlite;

// Version 1: schema_v1.sql. Version 2 adds request.choice (several samples
// answered by one request, `n`); version 3 adds sample.prime_echo (a
// trajectory's PrimeEcho score). An older database opened for writing is
// moved to version 3, one opened for reading is read as it is.
inline constexpr int64_t kRunDbVersion = 3;

// The run's settings: a rerun must match them (but for samples and turns,
// which it may raise).
struct RunInfo {
  std::string model;
  std::string endpoint;  // As recorded (gen/endpoint.h RecordedEndpoint).
  std::string prompt_id;
  int64_t prompt_version = 1;
  std::string backend;
  int64_t samples = 1;
  int64_t turns = 1;
  std::string sampling_json = "{}";
  std::string config_json = "{}";
  double created_at = 0;      // Filled in by BeginRun.
  std::string anvil_version;  // Filled in by BeginRun.
};

struct TaskRow {
  int64_t id = 0;  // Filled in by AddTask.
  std::string name;
  int64_t level = 0;
  std::optional<int64_t> problem;
  std::string path;
  std::string sha256;
  std::string source;
};

enum class AttemptState { kPending, kGenerated, kDone };
const char* AttemptStateName(AttemptState state);

struct AttemptRow {
  int64_t id = 0;
  int64_t sample_id = 0;
  int64_t task_id = 0;
  int64_t sample = 0;  // The sample's index, 0 .. N-1.
  int64_t turn = 1;
  AttemptState state = AttemptState::kPending;
  std::optional<std::string> outcome;
  std::optional<std::string> code;
  std::optional<std::string> format;
  std::optional<std::string> verdict_json;
  std::optional<double> reward;
  bool cached = false;
  // The sample's: its trajectory's PrimeEcho score over its turns so far
  // (rl/prime_echo.h), when the run scores them; none where a turn was the
  // machine's failure.
  std::optional<double> prime_echo;
};

// One request to the model and what came of it.
struct RequestRecord {
  std::string messages_json;
  std::optional<std::string> response;
  int64_t http_status = 0;
  std::string failure = "none";
  std::string message;
  std::optional<std::string> finish_reason;
  std::optional<int64_t> prompt_tokens, completion_tokens, reasoning_tokens;
  int64_t attempts = 1;
  double latency_s = 0;
  std::optional<std::string> logprobs_json, token_ids_json;
  // Which of the answer's choices is this attempt's: one request with n > 1
  // answers n attempts, each recorded with the whole answer and its choice.
  int64_t choice = 0;
};

// What an answer made of its attempt: code to judge (state generated), or an
// outcome without a verdict (state done: no_code, truncated, refused,
// server_error), with its reward (NULL for server_error).
struct AnswerUpdate {
  AttemptState state = AttemptState::kGenerated;
  std::optional<std::string> code, format, outcome;
  std::optional<double> reward;
  std::map<std::string, double> stage_seconds;  // The loop's own: queue, generate.
};

struct VerdictUpdate {
  std::string outcome;  // The verdict's status.
  std::string verdict_json;
  std::optional<double> reward;
  bool cached = false;
  std::map<std::string, double> stage_seconds;  // The loop's own stages and the verdict's.
};

class RunDb {
 public:
  // Opens `path`: `create` makes it when missing (and sets WAL mode);
  // otherwise it must exist, and `read_only` opens it for reading alone.
  // Errors: not a run database, written by a newer anvil, SQLite's own.
  static Result<std::unique_ptr<RunDb>> Open(const std::filesystem::path& path, bool create, bool read_only = false);
  ~RunDb();

  // The first call on a new database records `info`; on an existing one it
  // checks that model, prompt, backend, sampling and the other
  // settings (config_json: what changes a verdict) match (an error
  // naming each difference) and raises samples and turns to info's when
  // larger. Returns the run's settings as recorded.
  Result<RunInfo> BeginRun(const RunInfo& info);
  // The run's settings; an error when BeginRun never ran.
  Result<RunInfo> Info();

  // The task's id by identity (level, name, sha256), added when new.
  Result<int64_t> AddTask(const TaskRow& task);
  Result<std::vector<TaskRow>> Tasks();
  // The sample's id, added when new.
  Result<int64_t> AddSample(int64_t task_id, int64_t index);
  // The attempt's id for (sample, turn), added (pending) when new.
  Result<int64_t> AddAttempt(int64_t sample_id, int64_t turn);
  // Every attempt, by task id, sample index and turn.
  Result<std::vector<AttemptRow>> Attempts();

  // The messages and raw answer of the attempt's latest request that got an
  // answer (failure "none"); nullopt when none did.
  struct Answered {
    std::string messages_json;
    std::string response;
    int64_t choice = 0;  // The attempt's choice in the response.
  };
  Result<std::optional<Answered>> LastAnswered(int64_t attempt_id);

  // Records a request and its attempt's new state in one transaction.
  Status RecordAnswer(int64_t attempt_id, const RequestRecord& request, const AnswerUpdate& update);
  // Records a verdict (state done) with its stage times, in one transaction.
  Status RecordVerdict(int64_t attempt_id, const VerdictUpdate& verdict);
  // Makes the machine's failures to do again: server_error attempts become
  // pending (their requests stay), infra_error ones generated (their code
  // stays). Returns how many.
  Result<int64_t> ReopenMachineFailures();
  // The rewards of the sample's done attempts, by turn (none: no reward).
  Result<std::vector<std::optional<double>>> TurnRewards(int64_t sample_id);
  // Where each attempt's time went: attempt id -> stage -> seconds.
  Result<std::map<int64_t, std::map<std::string, double>>> StageTimes();
  // Records the sample's PrimeEcho score (NULL for none).
  Status RecordPrimeEcho(int64_t sample_id, std::optional<double> score);
  // Moves the WAL's content into the database file (the run is done).
  Status Checkpoint();

 private:
  RunDb(std::unique_ptr<Sqlite> db, int64_t version);
  Result<RunInfo> InfoLocked();
  std::mutex mu_;
  std::unique_ptr<Sqlite> db_;
  bool has_choice_;      // request.choice exists (version 2).
  bool has_prime_echo_;  // sample.prime_echo exists (version 3).
};

}  // namespace anvil
