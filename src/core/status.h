// Status and Result<T>: how anvil reports expected failures (bad usage, a task
// that does not import, a missing tool). A bad *candidate* is never a Status
// error: it becomes a verdict. Broken invariants abort instead.
// Both types are plain values; copy and move freely. Not thread-safe to mutate
// one object from two threads.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace anvil {

class Status {
 public:
  Status() = default;
  static Status Ok() { return Status(); }
  static Status Error(std::string message) { return Status(std::move(message)); }
  // The machine failed (a full disk, a sandbox it cannot set up), not the
  // input: callers judging a candidate make it an infra_error verdict.
  static Status MachineError(std::string message) {
    Status s(std::move(message));
    s.machine_ = true;
    return s;
  }

  bool ok() const { return !message_.has_value(); }
  bool machine_error() const { return machine_; }
  // The message; empty when ok().
  const std::string& message() const {
    static const std::string kEmpty;
    return message_ ? *message_ : kEmpty;
  }

 private:
  explicit Status(std::string message) : message_(std::move(message)) {}
  std::optional<std::string> message_;
  bool machine_ = false;
};

// Either a value or an error Status. value() on an error aborts.
template <typename T>
class Result {
 public:
  Result(T value) : data_(std::move(value)) {}         // NOLINT: implicit by design
  Result(Status status) : data_(std::move(status)) {}  // NOLINT: implicit by design

  bool ok() const { return std::holds_alternative<T>(data_); }
  const T& value() const& { return std::get<T>(data_); }
  T& value() & { return std::get<T>(data_); }
  // By value: `for (auto& x : F().value())` must not refer into a dead temporary.
  T value() && { return std::get<T>(std::move(data_)); }
  Status status() const { return ok() ? Status::Ok() : std::get<Status>(data_); }
  const std::string& message() const {
    static const std::string kEmpty;
    return ok() ? kEmpty : std::get<Status>(data_).message();
  }

 private:
  std::variant<T, Status> data_;
};

}  // namespace anvil
