#include "service/job_store.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <nlohmann/json.hpp>

#include "runs/sqlite.h"

namespace anvil {
namespace fs = std::filesystem;
namespace {

constexpr int64_t kSchemaVersion = 1;

// The service's tables; `seq` keeps the order jobs were accepted in.
constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS jobs (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  state TEXT NOT NULL CHECK (state IN ('queued', 'done', 'cancelled')),
  request TEXT NOT NULL,
  verdict TEXT,
  created_at REAL NOT NULL,
  finished_at REAL
);
CREATE INDEX IF NOT EXISTS jobs_queued ON jobs(state) WHERE state = 'queued';
CREATE TABLE IF NOT EXISTS idempotency_keys (
  key TEXT PRIMARY KEY,
  job_ids TEXT NOT NULL,
  created_at REAL NOT NULL
);
)sql";

double Now() { return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count(); }

StoredJob RowToJob(const Statement& s) {
  StoredJob j;
  j.id = s.Text(0);
  j.state = s.Text(1);
  j.request = s.Text(2);
  j.verdict = s.MaybeText(3).value_or("");
  j.created_at = s.Real(4);
  j.finished_at = s.MaybeReal(5).value_or(0);
  return j;
}

constexpr const char* kColumns = "id, state, request, verdict, created_at, finished_at";

}  // namespace

Result<std::unique_ptr<JobStore>> JobStore::Open(const fs::path& path) {
  std::error_code ec;
  if (path.has_parent_path()) fs::create_directories(path.parent_path(), ec);
  const fs::path lock_path = path.string() + ".lock";
  const int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return Status::Error("cannot open " + lock_path.string() + ": " + std::strerror(errno));
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    return Status::Error(path.string() + " is held by another anvil serve: stop it, or give this one another --db");
  }
  auto db = Sqlite::Open(path, /*create=*/true, /*read_only=*/false);
  if (!db.ok()) {
    ::close(fd);
    return db.status();
  }
  Sqlite& s = *db.value();
  auto version = s.UserVersion();
  Status st = version.status();
  if (st.ok() && version.value() != 0 && version.value() != kSchemaVersion) {
    st = Status::Error(path.string() + " is not a job store of this anvil (schema version " +
                       std::to_string(version.value()) + "): give another --db");
  }
  if (st.ok()) st = s.Exec("PRAGMA journal_mode = WAL");
  if (st.ok()) st = s.Exec("PRAGMA synchronous = NORMAL");
  if (st.ok()) {
    st = s.Exec(std::string("BEGIN IMMEDIATE;\n") + kSchema +
                "PRAGMA user_version = " + std::to_string(kSchemaVersion) + ";\nCOMMIT;");
  }
  if (st.ok()) {
    // A file of other tables (a run database, say) is not ours.
    auto check = s.Prepare("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'jobs'");
    if (!check.ok() || !check.value().Step().ok() || check.value().Int(0) != 1) {
      st = Status::Error(path.string() + " is not a job store: give another --db");
    }
  }
  if (!st.ok()) {
    ::close(fd);
    return Status::Error(path.string() + ": " + st.message());
  }
  return std::unique_ptr<JobStore>(new JobStore(std::move(db.value()), fd));
}

JobStore::JobStore(std::unique_ptr<Sqlite> db, int lock_fd) : db_(std::move(db)), lock_fd_(lock_fd) {}

JobStore::~JobStore() {
  db_.reset();
  ::close(lock_fd_);
}

Status JobStore::Add(const std::vector<StoredJob>& jobs, const std::string& idempotency_key,
                     const std::vector<std::string>& key_job_ids) {
  std::lock_guard<std::mutex> lock(mu_);
  SqliteTransaction tx(*db_);
  if (!tx.begun().ok()) return tx.begun();
  const double now = Now();
  for (const StoredJob& j : jobs) {
    auto insert = db_->Prepare("INSERT INTO jobs (id, state, request, created_at) VALUES (?, 'queued', ?, ?)");
    if (!insert.ok()) return insert.status();
    insert.value().Bind(1, j.id).Bind(2, j.request).Bind(3, now);
    if (Status s = insert.value().Run(); !s.ok()) return s;
  }
  if (!idempotency_key.empty()) {
    nlohmann::json ids = nlohmann::json::array();
    if (key_job_ids.empty()) {
      for (const StoredJob& j : jobs) ids.push_back(j.id);
    } else {
      for (const std::string& id : key_job_ids) ids.push_back(id);
    }
    auto insert = db_->Prepare("INSERT INTO idempotency_keys (key, job_ids, created_at) VALUES (?, ?, ?)");
    if (!insert.ok()) return insert.status();
    insert.value().Bind(1, idempotency_key).Bind(2, ids.dump()).Bind(3, now);
    if (Status s = insert.value().Run(); !s.ok()) return s;
  }
  return tx.Commit();
}

Result<std::optional<std::vector<std::string>>> JobStore::JobsOfKey(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  auto q = db_->Prepare("SELECT job_ids FROM idempotency_keys WHERE key = ?");
  if (!q.ok()) return q.status();
  q.value().Bind(1, key);
  auto row = q.value().Step();
  if (!row.ok()) return row.status();
  if (!row.value()) return std::optional<std::vector<std::string>>();
  auto ids = nlohmann::json::parse(q.value().Text(0), nullptr, false);
  if (ids.is_discarded() || !ids.is_array()) return Status::Error("the job store holds a malformed key row");
  std::vector<std::string> out;
  for (const auto& id : ids) out.push_back(id.get<std::string>());
  return std::optional<std::vector<std::string>>(std::move(out));
}

Status JobStore::Finish(const std::string& id, const std::string& verdict_json) {
  std::lock_guard<std::mutex> lock(mu_);
  auto u = db_->Prepare(
      "UPDATE jobs SET verdict = ?, finished_at = coalesce(finished_at, ?), "
      "state = CASE state WHEN 'cancelled' THEN 'cancelled' ELSE 'done' END WHERE id = ?");
  if (!u.ok()) return u.status();
  u.value().Bind(1, verdict_json).Bind(2, Now()).Bind(3, id);
  return u.value().Run();
}

Result<std::optional<std::string>> JobStore::Cancel(const std::string& id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto u = db_->Prepare("UPDATE jobs SET state = 'cancelled', finished_at = ? WHERE id = ? AND state = 'queued'");
  if (!u.ok()) return u.status();
  u.value().Bind(1, Now()).Bind(2, id);
  if (Status s = u.value().Run(); !s.ok()) return s;
  auto q = db_->Prepare("SELECT state FROM jobs WHERE id = ?");
  if (!q.ok()) return q.status();
  q.value().Bind(1, id);
  auto row = q.value().Step();
  if (!row.ok()) return row.status();
  if (!row.value()) return std::optional<std::string>();
  return std::optional<std::string>(q.value().Text(0));
}

Result<std::optional<StoredJob>> JobStore::Get(const std::string& id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto q = db_->Prepare(std::string("SELECT ") + kColumns + " FROM jobs WHERE id = ?");
  if (!q.ok()) return q.status();
  q.value().Bind(1, id);
  auto row = q.value().Step();
  if (!row.ok()) return row.status();
  if (!row.value()) return std::optional<StoredJob>();
  return std::optional<StoredJob>(RowToJob(q.value()));
}

Result<std::vector<StoredJob>> JobStore::Unfinished() {
  std::lock_guard<std::mutex> lock(mu_);
  auto q = db_->Prepare(std::string("SELECT ") + kColumns + " FROM jobs WHERE state = 'queued' ORDER BY seq");
  if (!q.ok()) return q.status();
  std::vector<StoredJob> out;
  while (true) {
    auto row = q.value().Step();
    if (!row.ok()) return row.status();
    if (!row.value()) break;
    out.push_back(RowToJob(q.value()));
  }
  return out;
}

}  // namespace anvil
