#include "service/evaluation_service.h"

#include <cstdio>
#include <nlohmann/json.hpp>
#include <random>

#include "backend/torch_info.h"
#include "core/files.h"
#include "core/sha256.h"
#include "verify/feedback.h"
#include "verify/policy.h"

namespace anvil {
namespace fs = std::filesystem;
using nlohmann::json;
namespace {

// A random job id: unguessable, so that one client cannot read another's
// verdicts by counting.
std::string NewJobId() {
  static thread_local std::mt19937_64 rng{std::random_device{}() ^ (std::uint64_t{std::random_device{}()} << 32)};
  char id[40];
  std::snprintf(id, sizeof id, "j_%016llx%016llx", static_cast<unsigned long long>(rng()),
                static_cast<unsigned long long>(rng()));
  return id;
}

// Writes `text` to `path` unless a file is there already (content-addressed:
// the same name holds the same bytes).
Status WriteOnce(const fs::path& path, const std::string& text) {
  std::error_code ec;
  if (fs::exists(path, ec)) return Status::Ok();
  fs::create_directories(path.parent_path(), ec);
  if (ec) return Status::Error("cannot make " + path.parent_path().string() + ": " + ec.message());
  return WriteFileAtomic(path, text);
}

std::string CandidateExtension(const std::string& format, const std::string& backend) {
  if (format == "kernelbench") return ".py";
  return backend == "cuda" ? ".cu" : ".cpp";
}

fs::path CandidateFile(const fs::path& work_dir, const std::string& hash, const std::string& format,
                       const std::string& backend) {
  return work_dir / "candidates" / ("cand_" + hash.substr(0, 32) + CandidateExtension(format, backend));
}

// What the store keeps of a request: everything that decides its verdict,
// the texts by their hashes (their files are under the work folder).
std::string StoredRequest(const EvaluateRequest& r, const std::string& task_hash, const std::string& candidate_hash) {
  json j = {{"task_hash", task_hash},
            {"candidate_hash", candidate_hash},
            {"candidate_format", r.candidate_format},
            {"backend", r.backend}};
  if (!r.sidecar_json.empty()) j["sidecar"] = json::parse(r.sidecar_json);
  if (!r.policy.empty()) j["policy"] = r.policy;
  if (r.trials) j["trials"] = *r.trials;
  if (r.reward) {
    j["reward"] = {{"lambda", r.reward->lambda},
                   {"nu_max", r.reward->nu_max},
                   {"vs", r.reward->against_compile ? "compile" : "eager"}};
  }
  return j.dump();
}

std::string WithIndex(std::size_t i, std::size_t n, const std::string& field) {
  if (n == 1) return field;
  return "jobs[" + std::to_string(i) + "]" + (field.empty() ? "" : "." + field);
}

}  // namespace

const char* JobStateName(JobState state) {
  switch (state) {
    case JobState::kQueued:
      return "queued";
    case JobState::kRunning:
      return "running";
    case JobState::kDone:
      return "done";
    case JobState::kCancelled:
      return "cancelled";
  }
  return "queued";
}

ServiceJob::Snapshot ServiceJob::Wait(std::chrono::duration<double> timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, timeout, [this] { return now_.state == JobState::kDone || now_.state == JobState::kCancelled; });
  return now_;
}

ServiceJob::Snapshot ServiceJob::Now() {
  std::lock_guard<std::mutex> lock(mu_);
  return now_;
}

bool ServiceJob::Start() {
  std::lock_guard<std::mutex> lock(mu_);
  if (now_.state != JobState::kQueued) return false;
  now_.state = JobState::kRunning;
  return true;
}

void ServiceJob::Finish(std::string verdict_json) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    now_.verdict = std::move(verdict_json);
    if (now_.state != JobState::kCancelled) now_.state = JobState::kDone;
  }
  cv_.notify_all();
}

bool ServiceJob::Cancel() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (now_.state == JobState::kDone) return false;
    now_.state = JobState::kCancelled;
  }
  cv_.notify_all();
  return true;
}

Result<std::unique_ptr<EvaluationService>> EvaluationService::Start(ServiceOptions options, OnVerdict on_verdict) {
  if (options.devices.empty()) return Status::Error("no device to judge on");
  std::error_code ec;
  fs::create_directories(options.work_dir, ec);
  if (ec) return Status::Error("cannot make the service's folder " + options.work_dir.string() + ": " + ec.message());
  if (options.db.empty()) options.db = options.work_dir / "jobs.db";
  auto store = JobStore::Open(options.db);
  if (!store.ok()) return store.status();
  auto unfinished = store.value()->Unfinished();
  if (!unfinished.ok()) return Status::Error(options.db.string() + ": " + unfinished.message());
  std::unique_ptr<EvaluationService> service(
      new EvaluationService(std::move(options), std::move(store.value()), std::move(on_verdict)));
  if (service->options_.verdict_cache) {
    // Torch's version is part of a verdict's key; without it, no cache.
    auto torch = LoadTorchInfo(service->options_.eval.cache_dir);
    if (torch.ok()) {
      service->torch_version_ = torch.value().torch_version;
      service->cache_ = std::make_unique<VerdictCache>(service->options_.eval.cache_dir);
    }
  }
  for (const StoredJob& job : unfinished.value()) service->Resume(job);
  service->resumed_ = unfinished.value().size();
  return service;
}

EvaluationService::EvaluationService(ServiceOptions options, std::unique_ptr<JobStore> store, OnVerdict on_verdict)
    : options_(std::move(options)), store_(std::move(store)), on_verdict_(std::move(on_verdict)) {
  for (std::size_t d = 0; d < options_.devices.size(); ++d) gates_.push_back(std::make_shared<DeviceGate>());
  stream_ = std::make_unique<JobStream>(EvaluatorsFor(options_.eval.policy, options_.eval.trials), options_.batch);
}

EvaluationService::~EvaluationService() {
  Drain();
  stream_->Finish();
}

std::vector<Evaluator*> EvaluationService::EvaluatorsFor(const Policy& policy, int trials) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& set = evaluators_[policy.Id() + "/" + std::to_string(trials)];
  if (set.empty()) {
    EvalOptions o = options_.eval;
    o.policy = policy;
    o.trials = trials;
    for (std::size_t d = 0; d < options_.devices.size(); ++d) {
      set.push_back(std::make_unique<Evaluator>(options_.devices[d], o, gates_[d]));
    }
  }
  std::vector<Evaluator*> all;
  for (auto& e : set) all.push_back(e.get());
  return all;
}

std::variant<Task, RequestError> EvaluationService::TaskFor(const EvaluateRequest& r) {
  const fs::path tasks = options_.work_dir / "tasks";
  const std::string hash = r.task_hash.empty() ? Sha256Hex(r.task_source) : r.task_hash;
  const std::string stem = "task_" + hash.substr(0, 12);
  const fs::path plain = tasks / hash / (stem + ".py");
  std::string folder = hash;
  if (!r.sidecar_json.empty()) folder += "-" + Sha256Hex(r.sidecar_json).substr(0, 16);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = tasks_.find(folder); it != tasks_.end()) return it->second;
  }
  std::string source = r.task_source;
  if (source.empty()) {
    auto text = ReadFile(plain);
    if (!text.ok()) {
      return RequestError{404, "task_hash",
                          "no task with this hash here: send its text once as task_source, then its hash"};
    }
    source = text.value();
  }
  if (Status s = WriteOnce(plain, source); !s.ok())
    return RequestError{503, "", "cannot store the task: " + s.message()};
  fs::path file = plain;
  if (!r.sidecar_json.empty()) {
    file = tasks / folder / (stem + ".py");
    if (Status s = WriteOnce(tasks / folder / (stem + ".anvil.json"), r.sidecar_json); !s.ok()) {
      return RequestError{503, "", "cannot store the task's sidecar: " + s.message()};
    }
    if (Status s = WriteOnce(file, source); !s.ok())
      return RequestError{503, "", "cannot store the task: " + s.message()};
  }
  auto task = LoadTask(file);
  if (!task.ok()) {
    // The text was written as given; only the sidecar can make it unreadable.
    return RequestError{400, r.sidecar_json.empty() ? "task_source" : "sidecar", task.message()};
  }
  std::lock_guard<std::mutex> lock(mu_);
  return tasks_.emplace(folder, task.value()).first->second;
}

std::variant<std::string, RequestError> EvaluationService::RegisterTask(const std::string& source) {
  EvaluateRequest r;
  r.task_source = source;
  auto task = TaskFor(r);
  if (auto* e = std::get_if<RequestError>(&task)) return *e;
  return Sha256Hex(source);
}

std::variant<EvaluationService::Ready, RequestError> EvaluationService::MakeReady(const EvaluateRequest& r) {
  if (r.backend != backend_name()) {
    return RequestError{422, "backend",
                        "this service judges on " + backend_name() + " (anvil serve --backend " + r.backend +
                            " starts one for " + r.backend + ")"};
  }
  Policy policy = options_.eval.policy;
  if (!r.policy.empty()) {
    auto named = PolicyNamed(r.policy);
    if (!named.ok()) return RequestError{400, "policy", named.message()};
    policy = named.value();
  }
  auto task = TaskFor(r);
  if (auto* e = std::get_if<RequestError>(&task)) return *e;
  const std::string task_hash = r.task_hash.empty() ? Sha256Hex(r.task_source) : r.task_hash;
  const std::string candidate_hash = Sha256Hex(r.candidate_source);
  const fs::path candidate = CandidateFile(options_.work_dir, candidate_hash, r.candidate_format, r.backend);
  if (Status s = WriteOnce(candidate, r.candidate_source); !s.ok()) {
    return RequestError{503, "", "cannot store the candidate: " + s.message()};
  }
  Ready ready;
  ready.job.task = std::get<Task>(std::move(task));
  ready.job.candidate = candidate;
  ready.evaluators = EvaluatorsFor(policy, r.trials.value_or(options_.eval.trials));
  ready.stored = StoredRequest(r, task_hash, candidate_hash);
  ready.task_path = "sha256:" + task_hash;
  ready.candidate_path = "sha256:" + candidate_hash;
  ready.reward = r.reward;
  ready.degenerate_key = ready.job.task.sha256 + "|" + policy.Id();
  if (cache_) {
    EvalOptions o = ready.evaluators.front()->options();
    if (r.reward) o.reward = *r.reward;
    VerdictKeyParts parts;
    parts.task_sha256 = ready.job.task.sha256;
    parts.format = r.candidate_format;
    parts.candidate_text = r.candidate_source;
    parts.options = VerdictOptionsFingerprint(o);
    parts.backend = backend_name();
    parts.device_model = options_.devices.front().DeviceModel();
    parts.torch_version = torch_version_;
    ready.cache_key = VerdictCacheKey(parts);
  }
  return ready;
}

EvaluationService::Accepted EvaluationService::Submit(const std::vector<EvaluateRequest>& requests,
                                                      const std::string& key) {
  Accepted a;
  auto refuse = [&](RequestError e) {
    a.error = std::move(e);
    return a;
  };
  if (requests.empty()) return refuse(RequestError{400, "jobs", "holds no job"});
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (draining_) {
      return refuse(RequestError{503, "",
                                 "the service is shutting down: send this to another one, or again once it "
                                 "is back"});
    }
  }
  if (!key.empty()) {
    auto known = store_->JobsOfKey(key);
    if (!known.ok()) return refuse(RequestError{503, "", "cannot read the job store: " + known.message()});
    if (known.value()) {
      for (const std::string& id : *known.value()) {
        if (auto job = Find(id)) a.jobs.push_back(job);
      }
      a.repeated = true;
      return a;
    }
  }
  std::vector<Ready> ready;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    auto r = MakeReady(requests[i]);
    if (auto* e = std::get_if<RequestError>(&r)) {
      e->field = WithIndex(i, requests.size(), e->field);
      return refuse(*e);
    }
    ready.push_back(std::get<Ready>(std::move(r)));
  }
  // What the verdict cache holds (read outside the lock: files).
  std::vector<std::string> cached(ready.size());
  for (std::size_t i = 0; i < ready.size(); ++i) {
    if (ready[i].cache_key.empty()) continue;
    auto hit = cache_->Lookup(ready[i].cache_key, ready[i].candidate_path);
    if (!hit) continue;
    json v = json::parse(*hit, nullptr, false);
    if (v.is_object() && v.contains("task") && v["task"].is_object()) v["task"]["path"] = ready[i].task_path;
    cached[i] = v.dump(-1, ' ', false, json::error_handler_t::replace);
  }
  std::vector<StoredJob> rows;
  std::vector<std::string> ids;
  std::vector<bool> enqueue(ready.size(), false);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (draining_) return refuse(RequestError{503, "", "the service is shutting down"});
    for (std::size_t i = 0; i < ready.size(); ++i) {
      if (auto it = degenerate_.find(ready[i].degenerate_key); it != degenerate_.end()) {
        return refuse(RequestError{
            422, WithIndex(i, ready.size(), requests[i].task_hash.empty() ? "task_source" : "task_hash"),
            "this task is degenerate under policy " +
                (requests[i].policy.empty() ? options_.eval.policy.name : requests[i].policy) + " (" + it->second +
                " passes on every input anvil tried): its check cannot tell a kernel from an output that computes "
                "nothing, so no reward from it means anything. Change the task's inputs or outputs"});
      }
    }
    // New jobs, or jobs joined: an identical request without a verdict yet
    // (or an earlier one of this batch) is the same job.
    std::map<std::string, std::shared_ptr<ServiceJob>> batch_flight;
    std::size_t pending = 0;
    for (std::size_t i = 0; i < ready.size(); ++i) {
      const std::string& k = ready[i].cache_key;
      if (cached[i].empty() && !k.empty()) {
        std::shared_ptr<ServiceJob> joined;
        if (auto it = in_flight_.find(k); it != in_flight_.end()) joined = it->second;
        if (auto it = batch_flight.find(k); !joined && it != batch_flight.end()) joined = it->second;
        if (joined) {
          a.jobs.push_back(joined);
          ids.push_back(joined->id());
          continue;
        }
      }
      StoredJob row;
      row.id = NewJobId();
      row.request = ready[i].stored;
      rows.push_back(row);
      ids.push_back(row.id);
      if (!cached[i].empty()) {
        a.jobs.push_back(std::make_shared<ServiceJob>(row.id, ServiceJob::Snapshot{JobState::kDone, cached[i]}));
        continue;
      }
      a.jobs.push_back(std::make_shared<ServiceJob>(row.id));
      if (!k.empty()) batch_flight[k] = a.jobs.back();
      enqueue[i] = true;
      ++pending;
    }
    if (live_.size() + pending > options_.max_jobs) {
      return refuse(RequestError{429, "",
                                 "the service holds " + std::to_string(live_.size()) +
                                     " jobs without a verdict and takes at most " + std::to_string(options_.max_jobs) +
                                     " (--max-jobs): retry after a while"});
    }
    // Recorded before anyone is told: a job acknowledged is a job on disk.
    if (Status s = store_->Add(rows, key, ids); !s.ok()) {
      return refuse(RequestError{503, "", "cannot record the job(s): " + s.message()});
    }
    for (std::size_t i = 0; i < ready.size(); ++i) {
      if (!cached[i].empty()) (void)store_->Finish(a.jobs[i]->id(), cached[i]);
      if (!enqueue[i]) continue;
      live_[a.jobs[i]->id()] = a.jobs[i];
      if (!ready[i].cache_key.empty()) in_flight_[ready[i].cache_key] = a.jobs[i];
    }
  }
  for (std::size_t i = 0; i < ready.size(); ++i) {
    if (!cached[i].empty() && on_verdict_) {
      Verdict v;
      v.status = StatusFromName(json::parse(cached[i], nullptr, false).value("status", "infra_error"))
                     .value_or(VerdictStatus::kInfraError);
      on_verdict_(a.jobs[i]->id(), v, true);
    }
    if (enqueue[i]) Enqueue(a.jobs[i], std::move(ready[i]));
  }
  return a;
}

void EvaluationService::Enqueue(std::shared_ptr<ServiceJob> job, Ready ready) {
  JobStream::Hooks hooks;
  hooks.evaluators = std::move(ready.evaluators);
  hooks.wanted = [job] { return job->Start(); };
  hooks.on_dropped = [this, job, key = ready.cache_key] { Done(job->id(), key); };
  stream_->Submit(
      std::move(ready.job),
      [this, job, task_path = ready.task_path, candidate_path = ready.candidate_path, reward = ready.reward,
       key = ready.cache_key, degenerate_key = ready.degenerate_key](const Job&, Verdict v) {
        v.task_path = task_path;
        v.candidate = candidate_path;
        if (reward) v.reward = ComputeReward(v, *reward);
        std::string text = VerdictToJson(v, -1);
        if (Status s = store_->Finish(job->id(), text); !s.ok()) {
          // The waiters still get it; a restart would judge it again.
          std::fprintf(stderr, "anvil serve: cannot record the verdict of %s: %s\n", job->id().c_str(),
                       s.message().c_str());
        }
        // A cache that cannot be written only costs time.
        if (!key.empty() && VerdictCacheable(StatusName(v.status))) (void)cache_->Store(key, text);
        if (!v.task_degenerate.empty()) {
          std::lock_guard<std::mutex> lock(mu_);
          degenerate_.emplace(degenerate_key, v.task_degenerate);
        }
        if (on_verdict_) on_verdict_(job->id(), v, false);
        NoLongerInFlight(job->id(), key);
        job->Finish(std::move(text));
        Done(job->id(), key);
      },
      std::move(hooks));
}

void EvaluationService::NoLongerInFlight(const std::string& id, const std::string& cache_key) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = in_flight_.find(cache_key); !cache_key.empty() && it != in_flight_.end() && it->second->id() == id) {
    in_flight_.erase(it);
  }
}

void EvaluationService::Done(const std::string& id, const std::string& cache_key) {
  NoLongerInFlight(id, cache_key);
  std::lock_guard<std::mutex> lock(mu_);
  live_.erase(id);
  drained_.notify_all();
}

void EvaluationService::Resume(const StoredJob& stored) {
  auto job = std::make_shared<ServiceJob>(stored.id);
  {
    std::lock_guard<std::mutex> lock(mu_);
    live_[stored.id] = job;
  }
  json j = json::parse(stored.request, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return FinishUnjudgeable(job, "its stored request is not JSON");
  EvaluateRequest r;
  try {
    r.task_hash = j.at("task_hash").get<std::string>();
    r.candidate_format = j.at("candidate_format").get<std::string>();
    r.backend = j.at("backend").get<std::string>();
    if (j.contains("sidecar")) r.sidecar_json = j["sidecar"].dump();
    r.policy = j.value("policy", "");
    if (j.contains("trials")) r.trials = j["trials"].get<int>();
    if (j.contains("reward")) {
      RewardOptions reward;
      reward.lambda = j["reward"].at("lambda").get<double>();
      reward.nu_max = j["reward"].at("nu_max").get<double>();
      reward.against_compile = j["reward"].at("vs") == "compile";
      r.reward = reward;
    }
    const fs::path candidate =
        CandidateFile(options_.work_dir, j.at("candidate_hash").get<std::string>(), r.candidate_format, r.backend);
    auto text = ReadFile(candidate);
    if (!text.ok()) return FinishUnjudgeable(job, "its candidate's text is gone: " + text.message());
    r.candidate_source = text.value();
  } catch (const json::exception& e) {
    return FinishUnjudgeable(job, std::string("its stored request is malformed: ") + e.what());
  }
  auto ready = MakeReady(r);
  if (auto* e = std::get_if<RequestError>(&ready)) {
    return FinishUnjudgeable(job, (e->field.empty() ? "" : e->field + ": ") + e->message);
  }
  Ready& made = std::get<Ready>(ready);
  if (!made.cache_key.empty()) {
    std::lock_guard<std::mutex> lock(mu_);
    in_flight_.try_emplace(made.cache_key, job);
  }
  Enqueue(job, std::move(made));
}

void EvaluationService::FinishUnjudgeable(const std::shared_ptr<ServiceJob>& job, const std::string& why) {
  Verdict v;
  v.status = VerdictStatus::kInfraError;
  v.backend = backend_name();
  v.policy = options_.eval.policy;
  v.anvil_version = ANVIL_VERSION;
  v.error = "this job was accepted before the service restarted and cannot be judged again: " + why;
  v.reward = ComputeReward(v, options_.eval.reward);
  v.feedback = MakeFeedback(v);
  std::string text = VerdictToJson(v, -1);
  (void)store_->Finish(job->id(), text);
  if (on_verdict_) on_verdict_(job->id(), v, false);
  job->Finish(std::move(text));
  Done(job->id(), "");
}

std::shared_ptr<ServiceJob> EvaluationService::Find(const std::string& id) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = live_.find(id); it != live_.end()) return it->second;
  }
  auto stored = store_->Get(id);
  if (!stored.ok() || !stored.value()) return nullptr;
  if (stored.value()->state == "queued") {
    // No live job holds it: it finished between the two looks (or its
    // verdict could not be recorded, and a restart judges it again).
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = live_.find(id); it != live_.end()) return it->second;
  }
  ServiceJob::Snapshot snapshot;
  snapshot.state = stored.value()->state == "cancelled" ? JobState::kCancelled
                   : stored.value()->state == "done"    ? JobState::kDone
                                                        : JobState::kQueued;
  snapshot.verdict = stored.value()->verdict;
  return std::make_shared<ServiceJob>(id, snapshot);
}

std::shared_ptr<ServiceJob> EvaluationService::Cancel(const std::string& id) {
  std::shared_ptr<ServiceJob> job;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = live_.find(id); it != live_.end()) job = it->second;
  }
  if (job && job->Cancel()) (void)store_->Cancel(id);
  return job ? job : Find(id);
}

void EvaluationService::Drain() {
  std::unique_lock<std::mutex> lock(mu_);
  draining_ = true;
  drained_.wait(lock, [this] { return live_.empty(); });
}

ServiceLoad EvaluationService::Load() {
  ServiceLoad load;
  load.lanes = stream_->InUse();
  load.queued = load.lanes.queued;
  load.evaluating = static_cast<std::size_t>(load.lanes.evaluating);
  return load;
}

}  // namespace anvil
