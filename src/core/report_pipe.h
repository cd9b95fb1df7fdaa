// Lines a child reports while it runs, on a pipe of their own: what it sends
// there stays sent. The parent drains the pipe on a thread of its own (a
// child never blocks on a full pipe) and keeps the lines, up to a cap; the
// child can add lines but never take one back, which a file in a folder it
// can write would allow (the candidate worker's report, docs/protocol.md).
// Attach before RunProcess, Finish after it; Lines() from any thread.
#pragma once

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/status.h"
#include "core/subprocess.h"

namespace anvil {

class ReportPipe {
 public:
  ReportPipe() = default;
  ReportPipe(const ReportPipe&) = delete;
  ReportPipe& operator=(const ReportPipe&) = delete;
  ~ReportPipe() { Finish(); }

  // Adds `flag N` to spec.argv and the write end to spec.pass_fds, and starts
  // draining.
  Status Attach(ProcessSpec& spec, const std::string& flag);
  // The child has ended: what is left in the pipe is read, the ends closed.
  void Finish();

  // The complete lines so far (without their newline).
  std::vector<std::string> Lines() const;
  // More than kMaxBytes came: what came after is dropped.
  bool overflowed() const { return overflowed_.load(); }

  static constexpr std::size_t kMaxBytes = 16 << 20;

 private:
  void Drain();
  void Take(const char* data, std::size_t n);

  int ends_[2] = {-1, -1};
  std::atomic<bool> stop_{false};
  std::atomic<bool> overflowed_{false};
  std::thread thread_;
  mutable std::mutex mu_;
  std::vector<std::string> lines_;
  std::string partial_;
  std::size_t bytes_ = 0;
};

}  // namespace anvil
