// The warm Python process (python/anvil_py/zygote.py) that forks anvil's
// Python workers instead of starting each from scratch (issue 5): it has
// imported torch and the workers once (no CUDA yet), so a child starts in
// milliseconds instead of seconds. A child gets what an exec'd one gets — its
// argv, environment, working folder, stdout/stderr pipes, passed descriptors
// (3, 4, ...), own process group — and enters the same sandbox through
// libanvil_sandbox.so (Sandbox::Describe, anvil_sandbox_enter). RunProcess
// uses it for every ProcessSpec with a python_module when one is running;
// otherwise, or when it dies, RunProcess starts the worker itself.
// ANVIL_ZYGOTE=0 turns it off. Thread-safe.
#pragma once

#include <sys/types.h>

#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/status.h"

namespace anvil {

struct ProcessSpec;

class Zygote {
 public:
  // The process-wide zygote, started on first use (its imports take a few
  // seconds); null when turned off, when libanvil_sandbox.so is not next to
  // the anvil binary, or when it could not start or has died (said once on
  // stderr; RunProcess then execs workers as before).
  static Zygote* Shared();
  ~Zygote();
  Zygote(const Zygote&) = delete;
  Zygote& operator=(const Zygote&) = delete;

  // Forks a child for `spec` (python_module, its args, env, working_dir,
  // pass_fds, sandbox) with stdout/stderr on out_w/err_w; it writes the
  // sandbox layers it entered (uint32) to report_w. Its pid (its own process
  // group) or an error.
  Result<pid_t> Spawn(const ProcessSpec& spec, const std::vector<std::pair<std::string, std::string>>& env, int out_w,
                      int err_w, int report_w);
  // The child's wait status once it has ended (SIGKILL's when the zygote
  // died first: the child dies with it); nullopt while it runs.
  std::optional<int> Reaped(pid_t pid);
  pid_t pid() const { return pid_; }

 private:
  Zygote() = default;
  static std::unique_ptr<Zygote> Start();
  void ReadLoop();

  int sock_ = -1;
  pid_t pid_ = -1;
  std::thread reader_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool alive_ = false;
  uint64_t next_id_ = 1;
  std::map<uint64_t, std::string> replies_;  // Request id -> reply (JSON).
  std::map<pid_t, int> reaped_;              // Child pid -> wait status.
};

}  // namespace anvil
