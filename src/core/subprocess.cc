#include "core/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <map>
#include <optional>

#include "core/child_env.h"
#include "core/zygote.h"

namespace anvil {
namespace {

using Clock = std::chrono::steady_clock;

// Keeps the first and last half of a stream once it grows past `cap`.
class CappedBuffer {
 public:
  explicit CappedBuffer(std::size_t cap) : cap_(cap) {}
  void Append(const char* data, std::size_t n) {
    total_ += n;
    if (head_.size() < cap_ / 2) {
      std::size_t take = std::min(n, cap_ / 2 - head_.size());
      head_.append(data, take);
      data += take;
      n -= take;
    }
    tail_.append(data, n);
    if (tail_.size() > cap_ - cap_ / 2) tail_.erase(0, tail_.size() - (cap_ - cap_ / 2));
  }
  std::string Take() const {
    std::size_t kept = head_.size() + tail_.size();
    if (kept == total_) return head_ + tail_;
    return head_ + "\n[... " + std::to_string(total_ - kept) + " bytes dropped ...]\n" + tail_;
  }

 private:
  std::size_t cap_;
  std::size_t total_ = 0;
  std::string head_, tail_;
};

// Reads until `n` bytes or end of file; how many arrived.
std::size_t ReadUpTo(int fd, void* buf, std::size_t n) {
  std::size_t got = 0;
  while (got < n) {
    ssize_t r = read(fd, static_cast<char*>(buf) + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += static_cast<std::size_t>(r);
  }
  return got;
}

void CloseIfOpen(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

// Watches a started child to its end: output, deadline, exit status.
Result<ProcessResult> Watch(const ProcessSpec& spec, pid_t pid, Zygote* zygote, Clock::time_point start,
                            uint32_t layers, int out_read, int err_read);
// The same for the zygote's child, whose sandbox layers come through the
// report pipe first.
Result<ProcessResult> WatchZygoteChild(const ProcessSpec& spec, pid_t pid, Zygote* zygote, Clock::time_point start,
                                       int out_pipe[2], int err_pipe[2], int exec_pipe[2]);

}  // namespace

std::string ProcessResult::Describe() const {
  if (timed_out) {
    char buf[64];
    snprintf(buf, sizeof buf, "timed out after %.1f s", wall_seconds);
    return buf;
  }
  if (term_signal != 0) {
    return "signal " + std::to_string(term_signal) + " (" + strsignal(term_signal) + ")";
  }
  return "exit " + std::to_string(exit_code);
}

namespace {

// Hands `fd` to the child as the next passed descriptor, named by `flag N`.
}  // namespace

void PassAs(ProcessSpec& spec, const std::string& flag, int fd) {
  spec.argv.push_back(flag);
  spec.argv.push_back(std::to_string(3 + spec.pass_fds.size()));
  spec.pass_fds.push_back(fd);
}

ReadyPipe::~ReadyPipe() {
  for (int fd : ends_) {
    if (fd >= 0) close(fd);
  }
}

Status ReadyPipe::Attach(ProcessSpec& spec, const std::string& flag) {
  if (pipe2(ends_, O_CLOEXEC) != 0) return Status::Error(std::string("pipe: ") + strerror(errno));
  PassAs(spec, flag, ends_[1]);
  spec.ready_fd = ends_[0];
  return Status::Ok();
}

Status Handshake::Attach(ProcessSpec& spec, const std::string& flag) {
  if (spec.deadline_extension_ms) return Status::Error("Handshake: the spec's deadline is already extended elsewhere");
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends_) != 0) {
    return Status::Error(std::string("socketpair: ") + strerror(errno));
  }
  PassAs(spec, flag, ends_[1]);
  extension_ms_ = std::make_shared<std::atomic<int64_t>>(0);
  spec.deadline_extension_ms = extension_ms_;
  thread_ = std::thread(&Handshake::Wait, this, Clock::now());
  return Status::Ok();
}

void Handshake::Wait(Clock::time_point start) {
  while (!stop_.load()) {
    pollfd p = {ends_[0], POLLIN, 0};
    const int r = poll(&p, 1, 50);
    if (r < 0 && errno != EINTR) return;
    if (r <= 0) continue;
    char byte = 0;
    if (read(ends_[0], &byte, 1) != 1) return;                  // The child's end closed: it will not get there.
    extension_ms_->store(std::numeric_limits<int32_t>::max());  // The child waits for us meanwhile.
    on_ready_();
    extension_ms_->store(std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count());
    went_on_ = send(ends_[0], "g", 1, MSG_NOSIGNAL) == 1;
    return;
  }
}

bool Handshake::Finish() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  for (int& fd : ends_) CloseIfOpen(fd);
  return went_on_.load();
}

Result<ProcessResult> RunProcess(const ProcessSpec& spec) {
  if (spec.argv.empty()) return Status::Error("RunProcess: empty argv");
  if (spec.pass_fds.size() > 8) return Status::Error("RunProcess: more than 8 descriptors to pass");

  // Everything the child needs is built before fork: after fork only
  // async-signal-safe calls are allowed (the parent may be multithreaded).
  // Not anvil's environment: its allowed part (core/child_env.h), so no
  // secret of anvil's reaches a child.
  const EnvPairs env_pairs = ChildEnvironment(spec.env);
  std::vector<std::string> env_strings = EnvStrings(env_pairs);
  std::vector<char*> envp, argv;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_copy = spec.argv;
  for (auto& s : argv_copy) argv.push_back(s.data());
  argv.push_back(nullptr);

  int out_pipe[2], err_pipe[2], exec_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) return Status::Error(std::string("pipe: ") + strerror(errno));
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    close(out_pipe[0]);
    close(out_pipe[1]);
    return Status::Error(std::string("pipe: ") + strerror(errno));
  }
  // Reports an exec failure (errno) to the parent; closed by a successful exec.
  if (pipe2(exec_pipe, O_CLOEXEC) != 0) {
    for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]}) close(fd);
    return Status::Error(std::string("pipe: ") + strerror(errno));
  }

  auto start = Clock::now();
  // A Python worker forked by the warm zygote when one runs (core/zygote.h).
  Zygote* zygote = spec.python_module.empty() ? nullptr : Zygote::Shared();
  if (zygote != nullptr) {
    auto spawned = zygote->Spawn(spec, env_pairs, out_pipe[1], err_pipe[1], exec_pipe[1]);
    if (spawned.ok()) return WatchZygoteChild(spec, spawned.value(), zygote, start, out_pipe, err_pipe, exec_pipe);
    zygote = nullptr;  // Started the usual way below.
  }
  const pid_t parent = getpid();
  const pid_t parent_group = getpgrp();
  const std::vector<int> cgroup_fds = spec.cgroup ? spec.cgroup->join_fds() : std::vector<int>{};
  pid_t pid = fork();
  if (pid < 0) {
    for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1], exec_pipe[0], exec_pipe[1]}) close(fd);
    return Status::Error(std::string("fork: ") + strerror(errno));
  }
  if (pid == 0) {
    // Into the job's control groups before anything else (its quotas).
    int cgroup_errno = 0;
    for (int fd : cgroup_fds) {
      if (cgroup_errno == 0 && write(fd, "0", 1) != 1) cgroup_errno = errno != 0 ? errno : EIO;
    }
    setpgid(0, 0);
    // If anvil dies (Ctrl-C, kill), the child dies with it instead of running on.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, STDIN_FILENO);
    dup2(out_pipe[1], STDOUT_FILENO);
    dup2(err_pipe[1], STDERR_FILENO);
    // Out of the way of 3, 4, ...: the exec report pipe and the descriptors
    // to pass (so a source that is itself 3 or 4 is not overwritten), as low
    // as that allows: anvil may run under a small RLIMIT_NOFILE.
    const std::size_t passed = std::min<std::size_t>(spec.pass_fds.size(), 8);
    const int above = 3 + static_cast<int>(passed);
    const int report = fcntl(exec_pipe[1], F_DUPFD_CLOEXEC, above);
    if (report < 0) {
      static const char kNoRoom[] = "anvil: the child has no room for its descriptors (RLIMIT_NOFILE too low)\n";
      (void)!write(STDERR_FILENO, kNoRoom, sizeof(kNoRoom) - 1);
      _exit(127);
    }
    int moved[8];
    for (std::size_t i = 0; i < passed; ++i) moved[i] = fcntl(spec.pass_fds[i], F_DUPFD_CLOEXEC, above);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    signal(SIGPIPE, SIG_DFL);
    // The pipe carries [layers][errno]: the layers always, errno only when
    // the child could not exec (or join its control groups).
    uint32_t layers = 0;
    if (cgroup_errno != 0) {
      (void)!write(report, &layers, sizeof layers);
      (void)!write(report, &cgroup_errno, sizeof cgroup_errno);
      _exit(127);
    }
    if (!spec.working_dir.empty() && chdir(spec.working_dir.c_str()) != 0) {
      int e = errno;
      (void)!write(report, &layers, sizeof layers);
      (void)!write(report, &e, sizeof e);
      _exit(127);
    }
    if (spec.max_file_bytes > 0) {
      const struct rlimit fsize = {spec.max_file_bytes, spec.max_file_bytes};
      (void)setrlimit(RLIMIT_FSIZE, &fsize);
    }
    if (spec.nice > 0) {
      errno = 0;
      const int now = getpriority(PRIO_PROCESS, 0);
      if (errno == 0) (void)setpriority(PRIO_PROCESS, 0, std::min(now + spec.nice, 19));
    }
    if (spec.sandbox) layers = spec.sandbox->EnterInChild(parent, parent_group);
    if (!cgroup_fds.empty()) layers |= kSandboxCgroup;
    // After the sandbox (which may hold a descriptor of its own until then):
    // the passed ones become 3, 4, ... and nothing else crosses exec, also not
    // what anvil itself inherited without close-on-exec (a shell's, a test runner's).
    for (std::size_t i = 0; i < passed; ++i) {
      if (moved[i] < 0 || dup2(moved[i], 3 + static_cast<int>(i)) < 0) _exit(127);
    }
    const unsigned first_closed = 3 + static_cast<unsigned>(passed);
    if (close_range(first_closed, static_cast<unsigned>(report) - 1, 0) != 0 ||
        close_range(static_cast<unsigned>(report) + 1, ~0U, 0) != 0) {
      for (int fd = static_cast<int>(first_closed); fd < 4096; ++fd) {
        if (fd != report) close(fd);
      }
    }
    (void)!write(report, &layers, sizeof layers);
    execvpe(argv[0], argv.data(), envp.data());
    int e = errno;
    (void)!write(report, &e, sizeof e);
    _exit(127);
  }
  setpgid(pid, pid);  // Also done in the child; whichever runs first wins.
  close(out_pipe[1]);
  close(err_pipe[1]);
  close(exec_pipe[1]);

  struct {
    uint32_t layers = 0;
    int exec_errno = 0;
  } report;
  const std::size_t got = ReadUpTo(exec_pipe[0], &report, sizeof report);
  close(exec_pipe[0]);
  const int exec_errno = report.exec_errno;
  if (got == sizeof report) {
    waitpid(pid, nullptr, 0);
    close(out_pipe[0]);
    close(err_pipe[0]);
    if (spec.cgroup && !(report.layers & kSandboxCgroup)) {
      return Status::Error("cannot put '" + spec.argv[0] +
                           "' in its control group (its quotas): " + strerror(exec_errno));
    }
    return Status::Error("cannot start '" + spec.argv[0] + "': " + strerror(exec_errno));
  }

  return Watch(spec, pid, nullptr, start, report.layers, out_pipe[0], err_pipe[0]);
}

namespace {

Result<ProcessResult> WatchZygoteChild(const ProcessSpec& spec, pid_t pid, Zygote* zygote, Clock::time_point start,
                                       int out_pipe[2], int err_pipe[2], int exec_pipe[2]) {
  close(out_pipe[1]);
  close(err_pipe[1]);
  close(exec_pipe[1]);
  uint32_t layers = 0;
  const std::size_t got = ReadUpTo(exec_pipe[0], &layers, sizeof layers);
  close(exec_pipe[0]);
  if (got < sizeof layers || layers == ~0u) layers = 0;
  auto result = Watch(spec, pid, zygote, start, layers, out_pipe[0], err_pipe[0]);
  if (result.ok() && spec.cgroup && !(layers & kSandboxCgroup)) {
    // The zygote's child could not join its control groups, and exited
    // before running anything (anvil_py/zygote.py).
    const std::string& err = result.value().err;
    return Status::Error("cannot put '" + spec.python_module +
                         "' in its control group (its quotas): " + err.substr(err.size() > 300 ? err.size() - 300 : 0));
  }
  return result;
}

Result<ProcessResult> Watch(const ProcessSpec& spec, pid_t pid, Zygote* zygote, Clock::time_point start,
                            uint32_t layers, int out_read, int err_read) {
  ProcessResult result;
  result.sandbox_layers = layers;
  if (spec.started_pid) spec.started_pid->store(pid);
  // The child's exit wakes the poll (-1 before Linux 5.3: then 1 ms naps). A
  // zygote's child is not ours to reap: its status comes from the zygote.
  int pidfd = zygote != nullptr ? -1 : static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  CappedBuffer out(spec.output_cap), err(spec.output_cap);
  int fds[2] = {out_read, err_read};
  CappedBuffer* bufs[2] = {&out, &err};
  bool exited = false;
  int wait_status = 0;
  bool term_sent = false;
  Clock::time_point kill_at{};
  Clock::time_point drain_until{};
  int ready_fd = spec.ready_fd;
  std::optional<Clock::time_point> ready_at;
  const bool has_deadline = spec.deadline.count() > 0 || ready_fd >= 0;
  auto deadline = start + spec.deadline;

  while (true) {
    if (ready_fd >= 0) {
      deadline = start + spec.ready_allowance;
    } else if (spec.deadline.count() > 0) {
      deadline = ready_at.value_or(start) + spec.deadline;
      // An extension counts from the start, a late readiness does not undo it.
      if (spec.deadline_extension_ms) {
        deadline =
            std::max(deadline, start + spec.deadline + std::chrono::milliseconds(spec.deadline_extension_ms->load()));
      }
    } else {
      deadline = Clock::time_point::max();
    }
    if (!exited) {
      bool ended = false;
      if (zygote != nullptr) {
        if (auto status = zygote->Reaped(pid)) {
          wait_status = *status;
          ended = true;
        }
      } else {
        ended = waitpid(pid, &wait_status, WNOHANG) == pid;
      }
      if (ended) {
        exited = true;
        // Descendants left in the group die with the child.
        kill(-pid, SIGKILL);
        drain_until = Clock::now() + std::chrono::milliseconds(200);
      }
    }
    if (fds[0] < 0 && fds[1] < 0 && exited) break;
    auto now = Clock::now();
    if (exited && now >= drain_until) break;  // A grandchild still holds a pipe.
    if (!exited && has_deadline && now >= deadline && !term_sent) {
      result.timed_out = ready_fd < 0;
      result.not_ready = ready_fd >= 0;
      kill(-pid, SIGTERM);
      term_sent = true;
      kill_at = now + spec.kill_grace;
    }
    if (term_sent && !exited && now >= kill_at) kill(-pid, SIGKILL);

    int timeout_ms = 50;
    if (has_deadline && !term_sent) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count();
      timeout_ms = static_cast<int>(std::clamp<long>(left, 0, 50));
    }
    pollfd pfds[3];
    int n = 0;
    int map[2];
    for (int i = 0; i < 2; ++i) {
      if (fds[i] >= 0) {
        pfds[n] = {fds[i], POLLIN, 0};
        map[n++] = i;
      }
    }
    const int pipes = n;
    // The child's exit wakes the poll too (a pidfd is readable once it has
    // exited): without it, a child that closed its output before being reaped
    // cost a whole poll interval.
    if (pidfd >= 0 && !exited) pfds[n++] = {pidfd, POLLIN, 0};
    const int ready_slot = ready_fd >= 0 ? n : -1;
    if (ready_fd >= 0) pfds[n++] = {ready_fd, POLLIN, 0};
    if (n == 0) {
      usleep(static_cast<useconds_t>(std::min(timeout_ms, 1)) * 1000);
      continue;
    }
    int pr = poll(pfds, n, timeout_ms);
    if (pr < 0 && errno != EINTR) break;
    if (pr > 0 && ready_slot >= 0 && pfds[ready_slot].revents != 0) {
      // A byte, or the end of the pipe: either way nothing later counts.
      ready_at = Clock::now();
      ready_fd = -1;
    }
    for (int j = 0; j < pipes && pr > 0; ++j) {
      if (pfds[j].revents == 0) continue;
      char buf[65536];
      ssize_t r = read(pfds[j].fd, buf, sizeof buf);
      if (r > 0) {
        bufs[map[j]]->Append(buf, static_cast<std::size_t>(r));
      } else if (r == 0 || (errno != EINTR && errno != EAGAIN)) {
        CloseIfOpen(fds[map[j]]);
      }
    }
  }
  CloseIfOpen(fds[0]);
  CloseIfOpen(fds[1]);
  CloseIfOpen(pidfd);
  if (!exited) {
    kill(-pid, SIGKILL);
    if (zygote != nullptr) {
      std::optional<int> status;
      while (!(status = zygote->Reaped(pid))) usleep(1000);
      wait_status = *status;
    } else {
      while (waitpid(pid, &wait_status, 0) < 0 && errno == EINTR) {
      }
    }
  }
  kill(-pid, SIGKILL);

  result.wall_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (ready_at) result.ready_seconds = std::chrono::duration<double>(*ready_at - start).count();
  if (WIFEXITED(wait_status)) {
    result.exit_code = WEXITSTATUS(wait_status);
  } else if (WIFSIGNALED(wait_status)) {
    result.term_signal = WTERMSIG(wait_status);
    result.exit_code = 128 + result.term_signal;
  }
  result.out = out.Take();
  result.err = err.Take();
  return result;
}

}  // namespace

}  // namespace anvil
