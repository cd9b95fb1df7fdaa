// Running a child process the way a verifier must: its own process group,
// stdin from /dev/null, stdout/stderr through pipes with a size cap, and a
// deadline that kills the whole group (SIGTERM, then SIGKILL). The parent never
// dies with the child. RunProcess is thread-safe: it touches no shared state.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/cgroup.h"
#include "core/sandbox.h"
#include "core/status.h"

namespace anvil {

struct ProcessSpec {
  std::vector<std::string> argv;  // argv[0] is looked up on PATH.
  // Added to (or replacing entries of) the parent's environment.
  std::vector<std::pair<std::string, std::string>> env;
  std::string working_dir;                // Default: the parent's.
  std::chrono::milliseconds deadline{0};  // 0 = no deadline.
  // Moves the deadline this many milliseconds later; another thread may raise
  // it while the child runs (a phase of the child with a deadline of its own).
  std::shared_ptr<const std::atomic<int64_t>> deadline_extension_ms;
  // The read end of a pipe the child writes a byte to once it is ready to
  // run what the deadline is for (a worker, after its imports). With one,
  // the deadline counts from then, and the child has `ready_allowance` to
  // get there: one that uses it up is killed as not ready (not timed out: the
  // time went to its start, not to the work the deadline is for).
  int ready_fd = -1;
  std::chrono::milliseconds ready_allowance{180000};
  // Set to the child's pid once it runs (its threads' /proc entries: the call
  // clock reads how long the child waited for a CPU, run/call_clock.h).
  std::shared_ptr<std::atomic<int>> started_pid;
  std::chrono::milliseconds kill_grace{500};  // SIGTERM -> SIGKILL delay.
  std::size_t output_cap = 1 << 20;           // Bytes kept per stream.
  // RLIMIT_FSIZE of the child (no file it writes grows past it); 0: as the
  // parent's. A sandbox sets its own.
  std::uintmax_t max_file_bytes = 0;
  // Added to the child's niceness (setpriority): background work, such as
  // the compilers, leaves the CPU first to what runs beside it.
  int nice = 0;
  // When set, the child enters it just before exec (core/sandbox.h).
  std::shared_ptr<const Sandbox> sandbox;
  // When set, the child joins these control groups first thing after fork,
  // before any of its code runs (core/cgroup.h); one that cannot is not run
  // (an error, never the child's failure). ProcessResult's sandbox_layers
  // has kSandboxCgroup when it did.
  std::shared_ptr<const JobCgroup> cgroup;
  // Parent descriptors the child gets as fds 3, 4, ... (in this order); every
  // other descriptor stays close-on-exec. The caller keeps and closes its own.
  std::vector<int> pass_fds;
  // A Python worker: argv is {python, "-m", python_module, args...}. The
  // zygote starts it when one runs (core/zygote.h); otherwise it is exec'd.
  std::string python_module;
};

struct ProcessResult {
  int exit_code = -1;        // Valid when term_signal == 0.
  int term_signal = 0;       // Signal that ended the child, 0 if it exited.
  bool timed_out = false;    // The deadline passed and the group was killed.
  bool not_ready = false;    // It was killed before it wrote to ready_fd.
  double ready_seconds = 0;  // From its start until it wrote to ready_fd.
  double wall_seconds = 0;
  uint32_t sandbox_layers = 0;  // SandboxLayer bits that took effect.
  std::string out;              // Captured stdout (head and tail when over the cap).
  std::string err;              // Captured stderr, likewise.

  bool Succeeded() const { return !timed_out && term_signal == 0 && exit_code == 0; }
  // "exit 3", "signal 11 (Segmentation fault)", "timed out after 2.0 s".
  std::string Describe() const;
};

// Runs `spec` to completion. Returns an error only when the child could not be
// started (fork/pipe failure, program not found); a child that crashes, fails
// or times out is a successful ProcessResult describing that.
Result<ProcessResult> RunProcess(const ProcessSpec& spec);

// The pipe behind ProcessSpec::ready_fd for a worker that takes its write end
// as `FLAG N` (N: the descriptor it has in the child). Keep it alive until
// RunProcess returns; both ends close with it.
// Passes `fd` to the child as the next of its descriptors 3, 4, ... and adds
// `flag N` (that number) to spec.argv.
void PassAs(ProcessSpec& spec, const std::string& flag, int fd);

class ReadyPipe {
 public:
  ReadyPipe() = default;
  ReadyPipe(const ReadyPipe&) = delete;
  ReadyPipe& operator=(const ReadyPipe&) = delete;
  ~ReadyPipe();

  // Adds `flag N` to spec.argv, the write end to spec.pass_fds, and sets
  // spec.ready_fd. Call it after every other pass_fds entry is in.
  Status Attach(ProcessSpec& spec, const std::string& flag);

 private:
  int ends_[2] = {-1, -1};
};

// A child that stops at one point until the parent lets it go on (a baseline
// worker, set up and ready to time, waits for the device alone). The child
// gets one end of a socket pair as `FLAG N`: it writes a byte there when it
// gets to that point and reads one before it goes on (end of file: it must
// not). When its byte comes, `on_ready` runs on the handshake's own thread and
// may block: the child's deadline stops while it does, and counts again, in
// full, from the parent's byte. Keep it alive until RunProcess returns, then
// call Finish().
class Handshake {
 public:
  explicit Handshake(std::function<void()> on_ready) : on_ready_(std::move(on_ready)) {}
  Handshake(const Handshake&) = delete;
  Handshake& operator=(const Handshake&) = delete;
  ~Handshake() { Finish(); }

  // Adds `flag N` to spec.argv and the child's end to spec.pass_fds (call it
  // after every other pass_fds entry is in), and takes over
  // spec.deadline_extension_ms.
  Status Attach(ProcessSpec& spec, const std::string& flag);
  // Stops waiting for the child (it has ended) and closes both ends. Returns
  // whether the child got there (on_ready ran and the parent's byte went).
  bool Finish();

 private:
  void Wait(std::chrono::steady_clock::time_point start);

  std::function<void()> on_ready_;
  int ends_[2] = {-1, -1};  // Parent's, child's.
  std::shared_ptr<std::atomic<int64_t>> extension_ms_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> went_on_{false};
  std::thread thread_;
};

}  // namespace anvil
