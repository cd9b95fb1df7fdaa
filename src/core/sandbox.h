// The sandbox every candidate process runs in (DESIGN.md, trust boundaries).
// Layers, each applied when the kernel allows it and reported either way:
//   landlock   the file system is read-only on the listed paths, writable on
//              the scratch paths, and closed everywhere else (the cache, the
//              reference outputs, other jobs, the home directory);
//   seccomp    no process creation, no IPv4/IPv6/packet sockets, no io_uring,
//              no ptrace or cross-process memory access, no signals to the
//              parent or to every process, no namespace or mount changes, no
//              execve once the worker runs — the kernel kills the process
//              (SIGSYS) at the attempt; changing another process's priority,
//              scheduling, affinity or limits fails with EPERM;
//   userns     a user namespace of its own: no capability over any other
//              process, even when anvil runs as root;
//   netns      a network namespace with no interfaces;
//   hidden     listed folders (the reference outputs) covered by empty mounts
//              in a private mount namespace — the fallback where a GPU
//              driver does not tolerate Landlock;
//   rofs       every other mount read-only, and a private /dev/shm;
//   root       without Landlock: the child's root is an empty read-only tmpfs
//              holding only the listed paths (bind mounts at the same paths,
//              pivot_root), so the home directory, the cache and other jobs'
//              folders are not there at all;
//   rlimits    file size, open files, no core dumps;
//   cgroup     the job's control groups: memory and process quotas
//              (core/cgroup.h; joined by RunProcess, not by EnterInChild).
// Prepare() does all the work that allocates (in the parent); EnterInChild()
// only makes system calls, so it is safe between fork() and exec() in a
// multithreaded parent. A prepared Sandbox is immutable and thread-safe.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"

namespace anvil {

struct SandboxPolicy {
  std::vector<std::filesystem::path> read_only;   // Files or folders: read, list, execute.
  std::vector<std::filesystem::path> read_write;  // Folders: everything inside.
  // Folders covered by an empty read-only tmpfs, files by /dev/null, in a
  // private mount namespace (needs the user namespace): hidden even where
  // Landlock is unavailable.
  std::vector<std::filesystem::path> hidden;
  std::uintmax_t max_file_bytes = 0;  // RLIMIT_FSIZE; 0 = unlimited.
  int max_open_files = 4096;
  // RLIMIT_CPU: CPU seconds (all threads) before SIGXCPU, SIGKILL a second
  // later; 0 = unlimited.
  std::uint64_t max_cpu_seconds = 0;
  bool confine_files = true;    // Landlock.
  bool scope_signals = true;    // Landlock's signal scope (ABI 6), with confine_files.
  bool forbid_syscalls = true;  // seccomp.
  // seccomp lets the child create processes and run programs (a compiler
  // runs its own); every other forbidden call still kills.
  bool allow_processes = false;
  bool user_namespace = true;     // No capabilities over other processes.
  bool network_namespace = true;  // No network interfaces.
  // In the private mount namespace (needs the user namespace), every mount
  // read-only but the read_write folders, /proc (less its kernel settings) and
  // /dev: no writes outside the scratch even where Landlock is unavailable.
  bool read_only_mounts = true;
  // Where Landlock is not in force (unavailable, or switched off for a GPU
  // driver), in the private mount namespace: a root of the listed paths only.
  bool own_root = true;
};

// Bits of the layers that took effect in a child.
enum SandboxLayer : uint32_t {
  kSandboxLandlock = 1u << 0,
  kSandboxSeccomp = 1u << 1,
  kSandboxUserNs = 1u << 2,
  kSandboxNetNs = 1u << 3,
  kSandboxRlimits = 1u << 4,
  kSandboxHidden = 1u << 5,    // Every `hidden` folder is covered.
  kSandboxReadOnly = 1u << 6,  // Every other mount read-only (read_only_mounts).
  kSandboxOwnRoot = 1u << 7,   // A root of the listed paths only (own_root).
  kSandboxSignals = 1u << 8,   // Landlock keeps signals inside the domain (ABI 6).
  kSandboxCgroup = 1u << 9,    // In the job's control groups (quotas, core/cgroup.h).
};

// "landlock, seccomp, userns, netns, rlimits, hidden" for the bits set.
std::vector<std::string> SandboxLayerNames(uint32_t layers);

class Sandbox {
 public:
  // Never fails for a missing kernel feature (that layer is left out); fails
  // only when a listed path cannot be opened.
  static Result<std::shared_ptr<const Sandbox>> Prepare(const SandboxPolicy& policy);
  ~Sandbox();
  Sandbox(const Sandbox&) = delete;
  Sandbox& operator=(const Sandbox&) = delete;

  // In the child, after fork() and before exec(): applies every layer it can.
  // Signals to `parent` (anvil), its group and `also_protected` (the process
  // that forked the child, when not anvil; 0: none) are forbidden. With
  // `exec_follows` false (the child runs its code in-process), so are execve
  // and execveat; with it true the exec'd program must forbid them itself
  // before it runs candidate code (python/anvil_py/no_exec.py). Returns the
  // layers applied; async-signal-safe.
  uint32_t EnterInChild(pid_t parent, pid_t parent_group, pid_t also_protected = 0, bool exec_follows = true) const;

  // Kernel support found at Prepare() time (Landlock ABI version, 0 = none).
  int landlock_abi() const { return landlock_abi_; }

  // For a child forked by another process (core/zygote.h): everything
  // EnterInChild needs, as text, and the Landlock ruleset (-1: none), which
  // travels as a descriptor. FromDescription rebuilds the sandbox there
  // around that descriptor (not closed by it); null for malformed text.
  std::string Describe() const;
  int ruleset_fd() const { return ruleset_fd_; }
  static std::unique_ptr<Sandbox> FromDescription(const std::string& text, int ruleset_fd);

 private:
  Sandbox() = default;

  SandboxPolicy policy_;
  int ruleset_fd_ = -1;
  bool owns_ruleset_ = true;
  int landlock_abi_ = 0;
  bool signal_scoped_ = false;  // The ruleset scopes signals (Landlock ABI 6).
  uid_t uid_ = 0;
  gid_t gid_ = 0;
  std::string uid_map_;
  std::string gid_map_;
  std::vector<std::string> hidden_;        // c_str()s used in the child.
  std::vector<std::string> writable_;      // The read_write folders, for read_only_mounts.
  std::vector<std::string> shm_readable_;  // The read_only paths under /dev/shm, bound into a private one.
  // own_root's paths, sorted (a folder before what is inside it), each
  // prefixed "r:" (read-only) or "w:" (read-write).
  std::vector<std::string> root_paths_;
};

}  // namespace anvil
