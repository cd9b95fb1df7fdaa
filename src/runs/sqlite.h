// SQLite handles owned by RAII objects: a connection (Sqlite) and its
// prepared statements (Statement), with errors as Status values that quote
// SQLite's message. No SQL of anvil's lives here (src/runs/run_db.cc owns
// the run database's). A connection is used by one thread at a time: its
// owner serializes (RunDb holds a mutex).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "core/status.h"

struct sqlite3;
struct sqlite3_stmt;

namespace anvil {

class Statement {
 public:
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&&) = delete;
  Statement(const Statement&) = delete;
  ~Statement();

  // Binds parameter `i` (1-based); nullopt binds NULL.
  Statement& Bind(int i, int64_t value);
  Statement& Bind(int i, double value);
  Statement& Bind(int i, const std::string& value);
  Statement& Bind(int i, std::optional<int64_t> value);
  Statement& Bind(int i, std::optional<double> value);
  Statement& Bind(int i, const std::optional<std::string>& value);

  // The next row: true when there is one, false when done; an error when
  // SQLite fails (a constraint, a full disk, a busy database past its wait).
  Result<bool> Step();
  // Steps to the end (a statement that returns no rows).
  Status Run();

  // Column `c` (0-based) of the current row.
  bool IsNull(int c) const;
  int64_t Int(int c) const;
  double Real(int c) const;
  std::string Text(int c) const;
  std::optional<int64_t> MaybeInt(int c) const;
  std::optional<double> MaybeReal(int c) const;
  std::optional<std::string> MaybeText(int c) const;

 private:
  friend class Sqlite;
  Statement(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  sqlite3* db_;
  sqlite3_stmt* stmt_;
  Status bind_error_;  // The first failed Bind, reported by Step.
};

class Sqlite {
 public:
  // Opens `path` read-write (made when `create`) or read-only; waits up to
  // 10 s for another process's lock before an operation fails as busy.
  static Result<std::unique_ptr<Sqlite>> Open(const std::filesystem::path& path, bool create, bool read_only);
  ~Sqlite();

  // Runs one or more statements that take no parameters.
  Status Exec(const std::string& sql);
  Result<Statement> Prepare(const std::string& sql);
  int64_t LastInsertId() const;
  // Rows the last INSERT, UPDATE or DELETE changed.
  int64_t Changes() const;
  // PRAGMA user_version.
  Result<int64_t> UserVersion();

 private:
  explicit Sqlite(sqlite3* db) : db_(db) {}
  sqlite3* db_;
};

// BEGIN IMMEDIATE for a scope: rolled back unless committed.
class SqliteTransaction {
 public:
  explicit SqliteTransaction(Sqlite& db) : db_(db) { begun_ = db_.Exec("BEGIN IMMEDIATE"); }
  ~SqliteTransaction() {
    if (begun_.ok() && !committed_) (void)db_.Exec("ROLLBACK");
  }
  SqliteTransaction(const SqliteTransaction&) = delete;
  SqliteTransaction& operator=(const SqliteTransaction&) = delete;
  const Status& begun() const { return begun_; }
  Status Commit() {
    Status s = db_.Exec("COMMIT");
    committed_ = s.ok();
    return s;
  }

 private:
  Sqlite& db_;
  Status begun_;
  bool committed_ = false;
};

}  // namespace anvil
