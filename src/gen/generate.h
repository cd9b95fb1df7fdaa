// The model loop: poses every task's samples to the model, records each
// answer in the run database as it comes (gen/extract_code.h decides code or
// the model's own failure), hands each candidate to the judges as soon as it
// is recorded (pipeline/job_stream.h) and records its verdict as soon as it
// is made; a sample that has not passed is asked again with the feedback
// right then (gen/repair.h), while other samples are still generated or
// judged: turns overlap, no sample waits for a whole turn. Resumable:
// it asks only for what has no answer, judges only what has no verdict, and
// asks again where the machine failed (server_error, infra_error). One
// Generator per run; Run is not reentrant.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "gen/chat.h"
#include "gen/model_client.h"
#include "gen/prompt.h"
#include "gen/repair.h"
#include "pipeline/batch.h"
#include "pipeline/job_stream.h"
#include "pipeline/verdict_cache.h"
#include "rl/prime_echo.h"
#include "runs/run_db.h"
#include "tasks/task.h"

namespace anvil {

struct GenerateOptions {
  ChatRequest request;  // Model and sampling; the messages are the prompt's.
  std::string format = "kernelbench";
  std::string backend = "cpu";
  int samples = 1;
  int turns = 1;                 // Turns per sample at most; a sample stops at a pass (gen/repair.h).
  std::string history = "full";  // A repair request holds every earlier turn ("full") or the last ("last").
  RepairOptions repair;
  // When set, each sample's PrimeEcho score over its turns so far is recorded
  // as its attempts are done (sample.prime_echo, docs/run-db.md).
  std::optional<PrimeEchoOptions> prime_echo;
  int concurrency = 16;  // Requests in flight.
  // First-turn samples of a task asked in one request (the protocol's `n`);
  // repair turns are asked one by one (each has its own conversation).
  int n_per_request = 1;
  // A run-wide budget of completion tokens: no request is sent once the
  // answers so far used it up (the run stops, resumable).
  std::optional<int64_t> max_total_tokens;
  std::filesystem::path candidates_dir;  // Where each candidate's file is written for judging.
  std::filesystem::path cache_dir;       // Where task specs are cached (a prompt that shows them).
  BatchOptions batch;
  // Verdicts answered from here when the same candidate was judged before
  // (null: every candidate is judged); `verdict_key` holds the parts of the
  // key that are the run's (options, backend, device, versions).
  VerdictCache* verdict_cache = nullptr;
  VerdictKeyParts verdict_key;
};

struct GenerateSummary {
  int64_t asked = 0;     // Requests sent this time.
  int64_t answered = 0;  // Of them, those with an answer (code or not).
  int64_t judged = 0;    // Verdicts made this time.
  int64_t cached = 0;    // Of them, answered from the verdict cache.
  int64_t reopened = 0;  // Machine failures of an earlier run asked or judged again.
  int64_t completion_tokens = 0;
  bool stopped = false;     // The run stopped before it was done (resumable).
  std::string stop_reason;  // Why, naming the endpoint or the budget.
};

// So far, this time: requests answered of those queued, verdicts made of
// the candidates handed to the judges. Both totals grow as repair turns are
// queued.
struct GenerateProgress {
  int64_t generated = 0, to_generate = 0, judged = 0, to_judge = 0, passed = 0;
  int64_t completion_tokens = 0;
  double elapsed_seconds = 0;
};

// The file name's numeric prefix ("19" of "19_ReLU"); nullopt when it has none.
std::optional<int64_t> ProblemNumber(const std::string& task_name);

// How `tasks` differ from the tasks a run holds, one line each ("" when the
// run holds none yet, or the same ones): a rerun must pose the same set.
std::string TaskSetDifference(const std::vector<TaskRow>& recorded, const std::vector<Task>& tasks);

// Each task's first-turn messages, by Task::sha256, with the fields of its
// spec when the prompt shows them (derived without tensors, cached in
// `cache_dir`). Error: a prompt without the variant, a spec worker that
// cannot run.
Result<std::map<std::string, std::vector<ChatMessage>>> FirstTurnPrompts(const PromptTemplate& prompt,
                                                                         const std::vector<Task>& tasks,
                                                                         const std::string& backend,
                                                                         const std::string& format,
                                                                         const std::filesystem::path& cache_dir);

class Generator {
 public:
  Generator(RunDb& db, ModelClient& client, const PromptTemplate& prompt, std::vector<Evaluator*> evaluators,
            GenerateOptions options);

  // Adds `tasks` (each with options.samples samples) to the run, then asks
  // and judges. Errors are anvil's own (the database, a prompt without the
  // asked variant); a stopped run is a summary with `stopped` set. Once per
  // Generator.
  Result<GenerateSummary> Run(const std::vector<Task>& tasks,
                              const std::function<void(const GenerateProgress&)>& on_progress);

 private:
  // Attempts to ask the model for in one request (several: first turns of
  // one task, with n), with the request's messages.
  struct Request {
    std::vector<AttemptRow> attempts;
    std::vector<ChatMessage> messages;
    std::chrono::steady_clock::time_point queued_at;  // Set by Queue.
  };

  Status AddTasks(const std::vector<Task>& tasks);
  // The next turn for every sample whose latest attempt (done) did not end
  // it and that has none yet: a run stopped between turns, or one that now
  // allows more turns.
  Status PlanMissingTurns();
  // Starts the work the run database holds: requests for the pending
  // attempts (a task's first turns `n_per_request` to a request), verdicts
  // for the generated ones.
  Status Resume(JobStream& judges);
  // The messages of a pending attempt: the first turn's, or a repair of
  // `before`, the sample's attempt of the turn before (null: none on record).
  Result<std::vector<ChatMessage>> Messages(const AttemptRow& attempt, const AttemptRow* before);
  // One of `concurrency` threads: asks for the queued attempts until every
  // attempt of the run is done (or the run stops).
  void AskLoop(JobStream& judges);
  // Records choice `choice` of `call`'s answer as attempt `a`'s, then has
  // its code judged or plans the sample's next turn.
  void Answered(AttemptRow a, const std::string& messages_json, const ModelCall& call, std::size_t choice,
                double queued, JobStream& judges);
  // Writes the candidate of a generated attempt and has it judged (or
  // answers it from the verdict cache).
  void Judge(const AttemptRow& attempt, JobStream& judges);
  // Records the verdict cache's verdict for `key` when it has one.
  bool AnswerFromCache(const AttemptRow& attempt, const std::string& key, const std::filesystem::path& file);
  // Hands the candidate to the judges; with a `key`, its verdict also
  // answers the same candidates that came while it was judged.
  void Submit(const AttemptRow& attempt, const std::string& key, const std::filesystem::path& file, JobStream& judges);
  // Records a verdict.
  void Judged(AttemptRow attempt, const VerdictUpdate& update);
  // After `done` (an attempt that ended): queues the sample's next turn when
  // it needs one. Then the attempt's work is over.
  void FollowUp(const AttemptRow& done);
  void Queue(Request request);
  void Close();                           // One attempt's work is over.
  void Halt(const std::string& why);      // The run stops (resumable).
  void Fail(const std::string& message);  // The run stops on anvil's own error.
  void Report();                          // on_progress_, under mu_.

  RunDb& db_;
  ModelClient& client_;
  const PromptTemplate& prompt_;
  std::vector<Evaluator*> evaluators_;
  GenerateOptions options_;
  std::map<int64_t, Task> tasks_;                            // By task id.
  std::map<std::string, std::vector<ChatMessage>> prompts_;  // By task sha256.

  // The run in flight: every field below is guarded by mu_.
  std::mutex mu_;
  std::condition_variable changed_;
  std::deque<Request> requests_;  // Attempts waiting for a request.
  int64_t open_ = 0;              // Attempts queued, asked or being judged.
  bool over_ = false;             // No attempt is open: the threads end.
  bool stopping_ = false;         // No more requests are sent.
  std::string failure_;           // anvil's own error, when one stopped the run.
  int64_t tokens_ = 0;            // Completion tokens used this time.
  // Candidates waiting for the verdict of the same candidate (by verdict
  // cache key) that is being judged, with their files.
  std::map<std::string, std::vector<std::pair<AttemptRow, std::filesystem::path>>> judging_;
  GenerateSummary summary_;
  GenerateProgress progress_;
  std::chrono::steady_clock::time_point start_;
  std::function<void(const GenerateProgress&)> on_progress_;
};

}  // namespace anvil
