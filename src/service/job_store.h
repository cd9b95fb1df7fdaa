// The reward service's jobs on disk (`anvil serve --db`): every accepted job
// with what it asks (the request, its texts by hash) and, once made, its
// verdict, in SQLite (WAL, synchronous=NORMAL). A job is written before it is
// acknowledged and its verdict when it is made, so after a crash (kill -9, a
// power cut short of the last commit) the jobs without a verdict are judged
// again and the finished ones never are. One server holds the file: a second
// one is refused while the first lives (an flock beside it). Thread-safe.
#pragma once

#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"

namespace anvil {

class Sqlite;

struct StoredJob {
  std::string id;
  std::string state;    // "queued" (no verdict yet), "done" or "cancelled".
  std::string request;  // JSON: the request with its texts replaced by their hashes.
  std::string verdict;  // JSON; "" until done (a cancelled job may still have one).
  double created_at = 0;
  double finished_at = 0;  // 0 until done or cancelled.
};

class JobStore {
 public:
  // Opens (or makes) the store; error when another process holds it or the
  // file is not one of anvil serve's.
  static Result<std::unique_ptr<JobStore>> Open(const std::filesystem::path& path);
  ~JobStore();

  // Records `jobs` (state queued) in one transaction; with an idempotency key,
  // the key too, naming `key_job_ids` (the batch's jobs, some of which may be
  // older: joined ones). Error when the disk refuses (nothing is then
  // recorded).
  Status Add(const std::vector<StoredJob>& jobs, const std::string& idempotency_key = "",
             const std::vector<std::string>& key_job_ids = {});
  // The job ids recorded under `idempotency_key`, in order; none if unknown.
  Result<std::optional<std::vector<std::string>>> JobsOfKey(const std::string& idempotency_key);
  // The job's verdict: state done (a cancelled job keeps its state).
  Status Finish(const std::string& id, const std::string& verdict_json);
  // Marks a queued job cancelled; its state after (unchanged when done), or
  // none for an unknown id.
  Result<std::optional<std::string>> Cancel(const std::string& id);
  Result<std::optional<StoredJob>> Get(const std::string& id);
  // Jobs without a verdict (queued), in the order they were accepted.
  Result<std::vector<StoredJob>> Unfinished();

 private:
  JobStore(std::unique_ptr<Sqlite> db, int lock_fd);
  std::mutex mu_;
  std::unique_ptr<Sqlite> db_;
  int lock_fd_;
};

}  // namespace anvil
