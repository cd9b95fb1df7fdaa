// The reward service's engine, apart from HTTP: it turns requests into jobs
// for the verifier's job stream (pipeline/job_stream.h), records each job and
// its verdict in the job store (service/job_store.h) and hands each verdict
// to whoever waits for it. Tasks and candidates that come as text are written
// once, content-addressed, under the service's folder; the verdict names them
// `sha256:<hex>`. A request's policy and trials pick an evaluator set of their
// own (made on first use), which shares the devices' gates and the stream's
// lanes with every other: timed runs stay alone on their device whatever
// policy their job was posed under. On start, the jobs the store holds without
// a verdict (a crash, a kill -9) are judged again. Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "backend/backend.h"
#include "pipeline/batch.h"
#include "pipeline/device_gate.h"
#include "pipeline/evaluator.h"
#include "pipeline/job_stream.h"
#include "pipeline/verdict_cache.h"
#include "service/evaluate_request.h"
#include "service/job_store.h"

namespace anvil {

struct ServiceOptions {
  EvalOptions eval;                // The defaults: policy, trials, deadlines, the cache folder.
  std::vector<Backend> devices;    // The backend's devices (one for cpu), each judged on.
  BatchOptions batch;              // Per device: evaluations side by side, compiles ahead.
  std::filesystem::path work_dir;  // tasks/ and candidates/ are written here.
  std::filesystem::path db;        // The job store; "" for WORK_DIR/jobs.db.
  std::size_t max_jobs = 4096;     // Accepted and not yet judged; beyond: the service is full.
  // Verdicts kept by what decides them (pipeline/verdict_cache.h, under the
  // cache folder: the model loop's too) answer repeats at once.
  bool verdict_cache = true;
};

enum class JobState { kQueued, kRunning, kDone, kCancelled };
const char* JobStateName(JobState state);

// One job: its state and, once made, its verdict (JSON text).
class ServiceJob {
 public:
  struct Snapshot {
    JobState state = JobState::kQueued;
    std::string verdict;  // "" until made.
  };
  explicit ServiceJob(std::string id) : id_(std::move(id)) {}
  ServiceJob(std::string id, Snapshot start) : id_(std::move(id)), now_(std::move(start)) {}
  const std::string& id() const { return id_; }
  // Waits until the job is done or cancelled, or `timeout` passed.
  Snapshot Wait(std::chrono::duration<double> timeout);
  Snapshot Now();
  // State changes; Start refuses (false) a cancelled job.
  bool Start();
  void Finish(std::string verdict_json);
  // False when the job is done already.
  bool Cancel();

 private:
  const std::string id_;
  std::mutex mu_;
  std::condition_variable cv_;
  Snapshot now_;
};

// How many jobs the service holds, by state, and what its lanes hold.
struct ServiceLoad {
  std::size_t queued = 0, evaluating = 0;
  JobStream::Use lanes;
};

class EvaluationService {
 public:
  // Called with a job's id and verdict on the thread that made it, before any
  // waiter has it; `cached` for a verdict the cache answered (then only the
  // verdict's status is set).
  using OnVerdict = std::function<void(const std::string& job_id, const Verdict&, bool cached)>;
  // Error when the options name no device, the work folder cannot be made,
  // or the job store cannot be opened (another server holds it).
  static Result<std::unique_ptr<EvaluationService>> Start(ServiceOptions options, OnVerdict on_verdict = nullptr);
  ~EvaluationService();  // Drains.
  EvaluationService(const EvaluationService&) = delete;
  EvaluationService& operator=(const EvaluationService&) = delete;

  struct Accepted {
    std::vector<std::shared_ptr<ServiceJob>> jobs;  // In request order, when accepted,
    std::optional<RequestError> error;              // else why not (4xx, 429 full, 503 draining or disk).
    bool repeated = false;                          // An idempotency key seen before: its jobs.
  };
  // Accepting, in order: a repeated idempotency key answers the jobs it was
  // first given; a request the verdict cache holds is a job done at once
  // (`cached: true`); one identical to a job still without a verdict joins
  // that job (the same id); a task found degenerate under the request's
  // policy (its check cannot tell a kernel from a trivial output) is refused
  // with 422.
  // Accepts `requests` (already parsed) as jobs, all or none; an error names
  // the field as `jobs[i].field` when there are several. A repeated
  // idempotency key answers the jobs it was given first.
  Accepted Submit(const std::vector<EvaluateRequest>& requests, const std::string& idempotency_key = "");
  // Stores a task's text so that requests can name it by hash; its hash, or
  // why not (4xx).
  std::variant<std::string, RequestError> RegisterTask(const std::string& source);
  // The job `id` (live, or finished and read from the store); null if unknown.
  std::shared_ptr<ServiceJob> Find(const std::string& id);
  // Cancels a job that has no verdict yet: a queued one is never judged; a
  // running one runs to its end, its state cancelled. Null if unknown.
  std::shared_ptr<ServiceJob> Cancel(const std::string& id);
  // Stops accepting jobs, then waits until every accepted one is done.
  void Drain();

  ServiceLoad Load();
  const ServiceOptions& options() const { return options_; }
  const std::string& backend_name() const { return options_.devices.front().name(); }
  // Jobs found without a verdict in the store at start, and judged again.
  std::size_t resumed() const { return resumed_; }
  // Whether repeats are answered from the verdict cache.
  bool caching() const { return cache_ != nullptr; }

 private:
  EvaluationService(ServiceOptions options, std::unique_ptr<JobStore> store, OnVerdict on_verdict);
  // A request made ready to judge: its task and candidate on disk, its
  // evaluators, what the store keeps of it.
  struct Ready {
    Job job;
    std::vector<Evaluator*> evaluators;
    std::string stored;  // The request as the store keeps it (JSON).
    std::string task_path, candidate_path;
    std::optional<RewardOptions> reward;
    std::string cache_key;       // "" without a verdict cache.
    std::string degenerate_key;  // The task under its policy.
  };
  std::variant<Ready, RequestError> MakeReady(const EvaluateRequest& request);
  // The task a request names, written once under tasks/ (error: 4xx).
  std::variant<Task, RequestError> TaskFor(const EvaluateRequest& request);
  // The evaluators (one per device) for a policy and a number of trials.
  std::vector<Evaluator*> EvaluatorsFor(const Policy& policy, int trials);
  // Hands an accepted (recorded) job to the stream.
  void Enqueue(std::shared_ptr<ServiceJob> job, Ready ready);
  // A stored job judged again after a restart.
  void Resume(const StoredJob& stored);
  // The verdict of a job that cannot be judged (its stored request unusable).
  void FinishUnjudgeable(const std::shared_ptr<ServiceJob>& job, const std::string& why);
  // A job has its verdict, or was dropped: it leaves the live jobs (and the
  // jobs in flight, under its cache key).
  void Done(const std::string& id, const std::string& cache_key);
  // It leaves the jobs in flight only: before its waiters wake, so that a
  // request repeated once they have the verdict never joins the finished job.
  void NoLongerInFlight(const std::string& id, const std::string& cache_key);

  const ServiceOptions options_;
  std::unique_ptr<JobStore> store_;
  const OnVerdict on_verdict_;
  std::vector<std::shared_ptr<DeviceGate>> gates_;  // One per device.
  std::mutex mu_;
  std::map<std::string, std::vector<std::unique_ptr<Evaluator>>> evaluators_;  // By "policy/trials".
  std::map<std::string, Task> tasks_;                                          // By folder name.
  std::map<std::string, std::shared_ptr<ServiceJob>> live_;                    // Jobs without a verdict.
  std::map<std::string, std::shared_ptr<ServiceJob>> in_flight_;               // By verdict cache key.
  std::map<std::string, std::string> degenerate_;                              // Why, by task sha256 and policy.
  std::unique_ptr<VerdictCache> cache_;
  std::string torch_version_;
  bool draining_ = false;
  std::size_t resumed_ = 0;
  std::condition_variable drained_;
  std::unique_ptr<JobStream> stream_;  // Last: its threads end first.
};

}  // namespace anvil
