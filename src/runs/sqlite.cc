#include "runs/sqlite.h"

#include <sqlite3.h>

namespace anvil {
namespace {

constexpr int kBusyWaitMs = 10000;

Status SqliteError(sqlite3* db, const std::string& doing) {
  return Status::Error("SQLite: " + doing + ": " + (db != nullptr ? sqlite3_errmsg(db) : "out of memory"));
}

}  // namespace

Statement::Statement(Statement&& other) noexcept
    : db_(other.db_), stmt_(other.stmt_), bind_error_(std::move(other.bind_error_)) {
  other.stmt_ = nullptr;
}

Statement::~Statement() {
  if (stmt_ != nullptr) sqlite3_finalize(stmt_);
}

Statement& Statement::Bind(int i, int64_t value) {
  if (sqlite3_bind_int64(stmt_, i, value) != SQLITE_OK && bind_error_.ok()) bind_error_ = SqliteError(db_, "bind");
  return *this;
}

Statement& Statement::Bind(int i, double value) {
  if (sqlite3_bind_double(stmt_, i, value) != SQLITE_OK && bind_error_.ok()) bind_error_ = SqliteError(db_, "bind");
  return *this;
}

Statement& Statement::Bind(int i, const std::string& value) {
  if (sqlite3_bind_text64(stmt_, i, value.data(), value.size(), SQLITE_TRANSIENT, SQLITE_UTF8) != SQLITE_OK &&
      bind_error_.ok()) {
    bind_error_ = SqliteError(db_, "bind");
  }
  return *this;
}

Statement& Statement::Bind(int i, std::optional<int64_t> value) {
  if (value) return Bind(i, *value);
  sqlite3_bind_null(stmt_, i);
  return *this;
}

Statement& Statement::Bind(int i, std::optional<double> value) {
  if (value) return Bind(i, *value);
  sqlite3_bind_null(stmt_, i);
  return *this;
}

Statement& Statement::Bind(int i, const std::optional<std::string>& value) {
  if (value) return Bind(i, *value);
  sqlite3_bind_null(stmt_, i);
  return *this;
}

Result<bool> Statement::Step() {
  if (!bind_error_.ok()) return bind_error_;
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return SqliteError(db_, "step");
}

Status Statement::Run() {
  while (true) {
    auto row = Step();
    if (!row.ok()) return row.status();
    if (!row.value()) return Status::Ok();
  }
}

bool Statement::IsNull(int c) const { return sqlite3_column_type(stmt_, c) == SQLITE_NULL; }
int64_t Statement::Int(int c) const { return sqlite3_column_int64(stmt_, c); }
double Statement::Real(int c) const { return sqlite3_column_double(stmt_, c); }

std::string Statement::Text(int c) const {
  const auto* text = sqlite3_column_text(stmt_, c);
  return text == nullptr ? "" : std::string(reinterpret_cast<const char*>(text), sqlite3_column_bytes(stmt_, c));
}

std::optional<int64_t> Statement::MaybeInt(int c) const {
  return IsNull(c) ? std::nullopt : std::optional<int64_t>(Int(c));
}
std::optional<double> Statement::MaybeReal(int c) const {
  return IsNull(c) ? std::nullopt : std::optional<double>(Real(c));
}
std::optional<std::string> Statement::MaybeText(int c) const {
  return IsNull(c) ? std::nullopt : std::optional<std::string>(Text(c));
}

Result<std::unique_ptr<Sqlite>> Sqlite::Open(const std::filesystem::path& path, bool create, bool read_only) {
  int flags = read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0);
  flags |= SQLITE_OPEN_NOMUTEX;  // The owner serializes.
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, flags, nullptr) != SQLITE_OK) {
    Status error = SqliteError(db, "open " + path.string());
    sqlite3_close(db);
    return error;
  }
  sqlite3_busy_timeout(db, kBusyWaitMs);
  sqlite3_extended_result_codes(db, 1);
  return std::unique_ptr<Sqlite>(new Sqlite(db));
}

Sqlite::~Sqlite() { sqlite3_close_v2(db_); }

Status Sqlite::Exec(const std::string& sql) {
  char* error = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error) != SQLITE_OK) {
    std::string message = error != nullptr ? error : sqlite3_errmsg(db_);
    sqlite3_free(error);
    return Status::Error("SQLite: " + message);
  }
  return Status::Ok();
}

Result<Statement> Sqlite::Prepare(const std::string& sql) {
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db_, sql.c_str(), static_cast<int>(sql.size()), &stmt, nullptr) != SQLITE_OK) {
    return SqliteError(db_, "prepare");
  }
  return Statement(db_, stmt);
}

int64_t Sqlite::LastInsertId() const { return sqlite3_last_insert_rowid(db_); }

int64_t Sqlite::Changes() const { return sqlite3_changes64(db_); }

Result<int64_t> Sqlite::UserVersion() {
  auto s = Prepare("PRAGMA user_version");
  if (!s.ok()) return s.status();
  auto row = s.value().Step();
  if (!row.ok()) return row.status();
  return row.value() ? s.value().Int(0) : 0;
}

}  // namespace anvil
