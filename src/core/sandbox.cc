#include "core/sandbox.h"

#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/landlock.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>

#include "core/sandbox_mounts.h"

namespace anvil {
namespace {

// Landlock ABI 1 file rights, plus TRUNCATE from ABI 3. Rights not handled
// here (ioctl on devices, from ABI 5) stay allowed: the GPU driver needs them.
constexpr uint64_t kFsRead = LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR;
constexpr uint64_t kFsWriteV1 = LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR |
                                LANDLOCK_ACCESS_FS_REMOVE_FILE | LANDLOCK_ACCESS_FS_MAKE_CHAR |
                                LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |
                                LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO |
                                LANDLOCK_ACCESS_FS_MAKE_BLOCK | LANDLOCK_ACCESS_FS_MAKE_SYM;
constexpr uint64_t kFsTruncate = 1ULL << 14;  // LANDLOCK_ACCESS_FS_TRUNCATE (ABI 3).
constexpr uint64_t kFileRights =
    LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_WRITE_FILE | kFsTruncate;

// struct landlock_ruleset_attr as of ABI 6 (older system headers lack `scoped`).
struct RulesetAttr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net;
  uint64_t scoped;
};
constexpr uint64_t kScopeSignal = 1ULL << 1;  // LANDLOCK_SCOPE_SIGNAL (ABI 6).

int LandlockAbi() {
  long abi = syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
  return abi < 0 ? 0 : static_cast<int>(abi);
}

// Adds `path` with `rights` (restricted to what a file may carry when it is
// not a folder). A path that does not exist is skipped.
Status AddPath(int ruleset, const std::filesystem::path& path, uint64_t rights) {
  int fd = ::open(path.c_str(), O_PATH | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return Status::Ok();
    return Status::Error("sandbox: cannot open " + path.string() + ": " + std::strerror(errno));
  }
  struct stat st;
  if (::fstat(fd, &st) == 0 && !S_ISDIR(st.st_mode)) rights &= kFileRights;
  struct landlock_path_beneath_attr attr = {};
  attr.allowed_access = rights;
  attr.parent_fd = fd;
  long r = syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &attr, 0);
  int err = errno;
  ::close(fd);
  if (r != 0) return Status::Error("sandbox: landlock rule for " + path.string() + ": " + std::strerror(err));
  return Status::Ok();
}

bool WriteAll(const char* path, const char* data, std::size_t n) {
  int fd = ::open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = ::write(fd, data, n) == static_cast<ssize_t>(n);
  ::close(fd);
  return ok;
}

// Classic BPF for seccomp. x86_64 and aarch64; another architecture gets no
// filter (reported as a missing layer).
#if defined(__x86_64__)
constexpr uint32_t kAuditArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
constexpr uint32_t kAuditArch = AUDIT_ARCH_AARCH64;
#endif

constexpr uint32_t kArg0Low = offsetof(struct seccomp_data, args[0]);
constexpr uint32_t kArg1Low = offsetof(struct seccomp_data, args[1]);
constexpr uint32_t kRetKill = SECCOMP_RET_KILL_PROCESS;
constexpr uint32_t kRetAllow = SECCOMP_RET_ALLOW;
constexpr uint32_t kRetEperm = SECCOMP_RET_ERRNO | EPERM;

// `forbid_exec`: execve and execveat kill too (when no exec of the worker
// itself follows; an exec'd worker stacks that filter on itself,
// python/anvil_py/no_exec.py). `allow_processes` (a compiler, which runs its
// own programs): fork, clone and exec pass, and nothing else changes.
bool InstallSeccomp(pid_t parent, pid_t parent_group, pid_t also_protected, bool forbid_exec, bool allow_processes) {
#if defined(__x86_64__) || defined(__aarch64__)
  const uint32_t parent_pid = static_cast<uint32_t>(parent);
  const uint32_t other_pid = static_cast<uint32_t>(also_protected > 0 ? also_protected : parent);
  const uint32_t minus_group = static_cast<uint32_t>(-parent_group);
  const uint32_t minus_one = static_cast<uint32_t>(-1);
  // Each check compares the syscall number; a block that loads an argument
  // always ends in a return, so A holds the number at every check. The
  // blocks below jump by fixed offsets: keep the numbering comments true.
  const struct sock_filter head[] = {
      /* 0 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
      /* 1 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kAuditArch, 1, 0),
      /* 2 */ BPF_STMT(BPF_RET | BPF_K, kRetKill),
      /* 3 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      // Threads only: clone() without CLONE_THREAD makes a process.
      /* 4 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone, 0, 4),
      /* 5 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, kArg0Low),
      /* 6 */ BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_THREAD, 0, 1),
      /* 7 */ BPF_STMT(BPF_RET | BPF_K, kRetAllow),
      /* 8 */ BPF_STMT(BPF_RET | BPF_K, allow_processes ? kRetAllow : kRetKill),
      // clone3 hides its flags in memory: ENOSYS makes libc fall back to clone.
      /* 9 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone3, 0, 1),
      /* 10 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
      // Sockets: local ones (AF_UNIX, netlink) only.
      /* 11 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_socket, 0, 6),
      /* 12 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, kArg0Low),
      /* 13 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_INET, 3, 0),
      /* 14 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_INET6, 2, 0),
      /* 15 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_PACKET, 1, 0),
      /* 16 */ BPF_STMT(BPF_RET | BPF_K, kRetAllow),
      /* 17 */ BPF_STMT(BPF_RET | BPF_K, kRetKill),
      // Signals: never to anvil, the process that forked the child (anvil or
      // its zygote), anvil's group, or every process.
      /* 18 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_kill, 0, 7),
      /* 19 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, kArg0Low),
      /* 20 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, parent_pid, 4, 0),
      /* 21 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, other_pid, 3, 0),
      /* 22 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, minus_group, 2, 0),
      /* 23 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, minus_one, 1, 0),
      /* 24 */ BPF_STMT(BPF_RET | BPF_K, kRetAllow),
      /* 25 */ BPF_STMT(BPF_RET | BPF_K, kRetKill),
      /* 26 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_tgkill, 0, 5),
      /* 27 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, kArg0Low),
      /* 28 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, parent_pid, 2, 0),
      /* 29 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, other_pid, 1, 0),
      /* 30 */ BPF_STMT(BPF_RET | BPF_K, kRetAllow),
      /* 31 */ BPF_STMT(BPF_RET | BPF_K, kRetKill),
      // tkill takes a thread id: the main thread's is the process id.
      /* 32 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_tkill, 0, 5),
      /* 33 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, kArg0Low),
      /* 34 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, parent_pid, 2, 0),
      /* 35 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, other_pid, 1, 0),
      /* 36 */ BPF_STMT(BPF_RET | BPF_K, kRetAllow),
      /* 37 */ BPF_STMT(BPF_RET | BPF_K, kRetKill),
      // Scheduling and limits of another process (the zygote that forks the
      // baselines, another candidate): EPERM, not a kill, since libraries
      // set their own threads' affinity (by thread id, refused too).
      /* 38 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_sched_setaffinity, 4, 0),
      /* 39 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_sched_setscheduler, 3, 0),
      /* 40 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_sched_setparam, 2, 0),
      /* 41 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_sched_setattr, 1, 0),
      /* 42 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_prlimit64, 0, 4),
      /* 43 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, kArg0Low),
      /* 44 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 1),
      /* 45 */ BPF_STMT(BPF_RET | BPF_K, kRetAllow),
      /* 46 */ BPF_STMT(BPF_RET | BPF_K, kRetEperm),
      // setpriority(which, who, prio): only its own process or group (who 0);
      // PRIO_USER with who 0 means every process of the user.
      /* 47 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_setpriority, 0, 6),
      /* 48 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, kArg1Low),
      /* 49 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 3),
      /* 50 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, kArg0Low),
      /* 51 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PRIO_USER, 1, 0),
      /* 52 */ BPF_STMT(BPF_RET | BPF_K, kRetAllow),
      /* 53 */ BPF_STMT(BPF_RET | BPF_K, kRetEperm),
  };
  // Always forbidden: tracing and other processes' memory, io_uring (it
  // could open sockets without socket()), namespaces, mounts (which could
  // undo the hidden paths), bpf; unless processes are allowed, process
  // creation that bypasses clone; with forbid_exec, replacing the process's
  // image (a new image inherits the worker's descriptors).
  static constexpr long kForbidden[] = {
      SYS_ptrace,
      SYS_process_vm_readv,
      SYS_process_vm_writev,
      SYS_io_uring_setup,
      SYS_unshare,
      SYS_setns,
      SYS_mount,
      SYS_umount2,
      SYS_pivot_root,
      SYS_move_mount,
      SYS_open_tree,
      SYS_fsopen,
      SYS_fsmount,
      SYS_fsconfig,
      SYS_mount_setattr,
      SYS_bpf,
  };
  static constexpr long kProcessCalls[] = {
#if defined(__x86_64__)
    SYS_fork,
    SYS_vfork,
#endif
    0,  // (none on aarch64: no array of size 0)
  };
  static constexpr long kExecCalls[] = {SYS_execve, SYS_execveat};
  constexpr std::size_t kHead = sizeof(head) / sizeof(head[0]);
  constexpr std::size_t kProcesses = sizeof(kProcessCalls) / sizeof(kProcessCalls[0]) - 1;
  constexpr std::size_t kExec = sizeof(kExecCalls) / sizeof(kExecCalls[0]);
  constexpr std::size_t kMax = sizeof(kForbidden) / sizeof(kForbidden[0]) + kProcesses + kExec;
  long forbidden[kMax];
  std::size_t count = 0;
  for (long call : kForbidden) forbidden[count++] = call;
  for (std::size_t i = 0; i < kProcesses && !allow_processes; ++i) forbidden[count++] = kProcessCalls[i];
  for (std::size_t i = 0; i < kExec && forbid_exec && !allow_processes; ++i) forbidden[count++] = kExecCalls[i];
#if defined(__x86_64__)
  // x32 calls carry this bit in their number, so none of the checks above
  // sees them: where the kernel has that ABI, they would all pass.
  constexpr std::size_t kX32 = 1;
#else
  constexpr std::size_t kX32 = 0;
#endif
  struct sock_filter filter[kHead + kMax + kX32 + 2];
  std::size_t n = 0;
  for (; n < kHead; ++n) filter[n] = head[n];
  for (std::size_t i = 0; i < count; ++i, ++n) {
    // Jump over the remaining checks and the ALLOW to the KILL.
    const auto to_kill = static_cast<unsigned char>(count - i + kX32);
    filter[n] = BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<uint32_t>(forbidden[i]), to_kill, 0);
  }
#if defined(__x86_64__)
  filter[n++] = BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u /* __X32_SYSCALL_BIT */, 1, 0);
#endif
  filter[n++] = BPF_STMT(BPF_RET | BPF_K, kRetAllow);
  filter[n++] = BPF_STMT(BPF_RET | BPF_K, kRetKill);
  struct sock_fprog prog = {static_cast<unsigned short>(n), filter};
  return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) == 0;
#else
  (void)parent;
  (void)parent_group;
  (void)also_protected;
  (void)forbid_exec;
  (void)allow_processes;
  return false;
#endif
}

}  // namespace

std::vector<std::string> SandboxLayerNames(uint32_t layers) {
  std::vector<std::string> names;
  if (layers & kSandboxLandlock) names.push_back("landlock");
  if (layers & kSandboxSeccomp) names.push_back("seccomp");
  if (layers & kSandboxUserNs) names.push_back("userns");
  if (layers & kSandboxNetNs) names.push_back("netns");
  if (layers & kSandboxRlimits) names.push_back("rlimits");
  if (layers & kSandboxHidden) names.push_back("hidden");
  if (layers & kSandboxReadOnly) names.push_back("rofs");
  if (layers & kSandboxOwnRoot) names.push_back("root");
  if (layers & kSandboxSignals) names.push_back("signals");
  if (layers & kSandboxCgroup) names.push_back("cgroup");
  return names;
}

Result<std::shared_ptr<const Sandbox>> Sandbox::Prepare(const SandboxPolicy& policy) {
  std::shared_ptr<Sandbox> box(new Sandbox());
  box->policy_ = policy;
  box->uid_ = ::getuid();
  box->gid_ = ::getgid();
  // Inside the namespace the user keeps its own ids, so file permissions
  // are what they were.
  box->uid_map_ = std::to_string(box->uid_) + " " + std::to_string(box->uid_) + " 1\n";
  box->gid_map_ = std::to_string(box->gid_) + " " + std::to_string(box->gid_) + " 1\n";
  for (const auto& p : policy.hidden) box->hidden_.push_back(p.string());
  for (const auto& p : policy.read_write) box->writable_.push_back(p.string());
  for (const auto& p : policy.read_only) {
    if (PathIsUnder(p.c_str(), "/dev/shm")) box->shm_readable_.push_back(p.string());
  }
  if (policy.own_root) {
    auto norm = [](const std::filesystem::path& p) {
      std::string t = p.lexically_normal().string();
      while (t.size() > 1 && t.back() == '/') t.pop_back();
      return t;
    };
    std::map<std::string, char> all;  // Path -> 'r' or 'w' (listed both ways: 'w'), sorted.
    for (const auto& p : policy.read_only) all.emplace(norm(p), 'r');
    for (const auto& p : policy.read_write) all[norm(p)] = 'w';
    for (const auto& [path, mode] : all) {
      // Already there with the same access through a folder above it: no mount of its own (but the child's
      // /dev/shm is a tmpfs of its own, whatever is listed above it).
      bool covered = false;
      const bool shm = PathIsUnder(path.c_str(), "/dev/shm");
      for (const auto& kept : box->root_paths_) {
        const char* above = kept.c_str() + 2;
        covered =
            covered || (kept[0] == mode && PathIsUnder(path.c_str(), above) && shm == PathIsUnder(above, "/dev/shm"));
      }
      if (!covered) box->root_paths_.push_back(std::string(1, mode) + ":" + path);
    }
  }
  if (!policy.confine_files) return std::shared_ptr<const Sandbox>(box);
  box->landlock_abi_ = LandlockAbi();
  if (box->landlock_abi_ <= 0) return std::shared_ptr<const Sandbox>(box);

  const uint64_t write = kFsWriteV1 | (box->landlock_abi_ >= 3 ? kFsTruncate : 0);
  RulesetAttr attr = {};
  attr.handled_access_fs = kFsRead | write;
  // From ABI 6 the domain also keeps signals in: the child cannot signal any
  // process outside it (other candidates, the host's daemons), whatever their
  // user. Older kernels get only the first field: they reject a larger struct
  // with unknown fields set.
  box->signal_scoped_ = policy.scope_signals && box->landlock_abi_ >= 6;
  if (box->signal_scoped_) attr.scoped = kScopeSignal;
  const std::size_t size = box->signal_scoped_ ? sizeof(attr) : sizeof(attr.handled_access_fs);
  int fd = static_cast<int>(syscall(SYS_landlock_create_ruleset, &attr, size, 0));
  if (fd < 0) {
    box->landlock_abi_ = 0;
    box->signal_scoped_ = false;
    return std::shared_ptr<const Sandbox>(box);
  }
  ::fcntl(fd, F_SETFD, FD_CLOEXEC);
  box->ruleset_fd_ = fd;
  for (const auto& p : policy.read_only) {
    if (Status s = AddPath(fd, p, kFsRead); !s.ok()) return s;
  }
  for (const auto& p : policy.read_write) {
    if (Status s = AddPath(fd, p, kFsRead | write); !s.ok()) return s;
  }
  return std::shared_ptr<const Sandbox>(box);
}

Sandbox::~Sandbox() {
  if (ruleset_fd_ >= 0 && owns_ruleset_) ::close(ruleset_fd_);
}

std::string Sandbox::Describe() const {
  nlohmann::json j = {{"uid_map", uid_map_},
                      {"gid_map", gid_map_},
                      {"hidden", hidden_},
                      {"writable", writable_},
                      {"shm_readable", shm_readable_},
                      {"root_paths", root_paths_},
                      {"own_root", policy_.own_root},
                      {"signal_scoped", signal_scoped_},
                      {"read_only_mounts", policy_.read_only_mounts},
                      {"max_file_bytes", policy_.max_file_bytes},
                      {"max_open_files", policy_.max_open_files},
                      {"max_cpu_seconds", policy_.max_cpu_seconds},
                      {"forbid_syscalls", policy_.forbid_syscalls},
                      {"allow_processes", policy_.allow_processes},
                      {"user_namespace", policy_.user_namespace},
                      {"network_namespace", policy_.network_namespace}};
  return j.dump();
}

std::unique_ptr<Sandbox> Sandbox::FromDescription(const std::string& text, int ruleset_fd) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object()) return nullptr;
  std::unique_ptr<Sandbox> box(new Sandbox());
  try {
    box->uid_map_ = j.at("uid_map").get<std::string>();
    box->gid_map_ = j.at("gid_map").get<std::string>();
    box->hidden_ = j.at("hidden").get<std::vector<std::string>>();
    box->writable_ = j.at("writable").get<std::vector<std::string>>();
    box->shm_readable_ = j.at("shm_readable").get<std::vector<std::string>>();
    box->root_paths_ = j.at("root_paths").get<std::vector<std::string>>();
    box->policy_.own_root = j.at("own_root").get<bool>();
    box->signal_scoped_ = j.at("signal_scoped").get<bool>();
    box->policy_.read_only_mounts = j.at("read_only_mounts").get<bool>();
    box->policy_.max_file_bytes = j.at("max_file_bytes").get<std::uintmax_t>();
    box->policy_.max_open_files = j.at("max_open_files").get<int>();
    box->policy_.max_cpu_seconds = j.at("max_cpu_seconds").get<std::uint64_t>();
    box->policy_.forbid_syscalls = j.at("forbid_syscalls").get<bool>();
    box->policy_.allow_processes = j.at("allow_processes").get<bool>();
    box->policy_.user_namespace = j.at("user_namespace").get<bool>();
    box->policy_.network_namespace = j.at("network_namespace").get<bool>();
  } catch (const nlohmann::json::exception&) {
    return nullptr;
  }
  box->ruleset_fd_ = ruleset_fd;
  box->owns_ruleset_ = false;
  return box;
}

uint32_t Sandbox::EnterInChild(pid_t parent, pid_t parent_group, pid_t also_protected, bool exec_follows) const {
  uint32_t layers = 0;
  struct rlimit no_core = {0, 0};
  bool limits = ::setrlimit(RLIMIT_CORE, &no_core) == 0;
  if (policy_.max_file_bytes > 0) {
    struct rlimit fsize = {policy_.max_file_bytes, policy_.max_file_bytes};
    limits = limits && ::setrlimit(RLIMIT_FSIZE, &fsize) == 0;
  }
  if (policy_.max_open_files > 0) {
    rlim_t n = static_cast<rlim_t>(policy_.max_open_files);
    struct rlimit files = {n, n};
    limits = limits && ::setrlimit(RLIMIT_NOFILE, &files) == 0;
  }
  if (policy_.max_cpu_seconds > 0) {
    const rlim_t n = static_cast<rlim_t>(policy_.max_cpu_seconds);
    struct rlimit cpu = {n, n + 1};
    limits = limits && ::setrlimit(RLIMIT_CPU, &cpu) == 0;
  }
  if (limits) layers |= kSandboxRlimits;

  const int net = policy_.network_namespace ? CLONE_NEWNET : 0;
  if (policy_.user_namespace) {
    // Landlock confines the files where it is in force; elsewhere, a root of the listed paths.
    const bool own_root = policy_.own_root && ruleset_fd_ < 0 && !root_paths_.empty();
    const int mounts = hidden_.empty() && !policy_.read_only_mounts && !own_root ? 0 : CLONE_NEWNS;
    if (::unshare(CLONE_NEWUSER | net | mounts) == 0) {
      layers |= kSandboxUserNs | (net ? static_cast<uint32_t>(kSandboxNetNs) : 0u);
      static const char kDeny[] = "deny";
      WriteAll("/proc/self/setgroups", kDeny, sizeof(kDeny) - 1);
      WriteAll("/proc/self/uid_map", uid_map_.data(), uid_map_.size());
      WriteAll("/proc/self/gid_map", gid_map_.data(), gid_map_.size());
      if (mounts != 0 && ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0) {
        bool all = true;
        for (const auto& path : hidden_) {
          // A folder under an empty tmpfs; a file (a secret seed list) under /dev/null, which reads empty.
          struct stat st;
          const bool file = ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
          all = (file ? ::mount("/dev/null", path.c_str(), nullptr, MS_BIND, nullptr)
                      : ::mount("anvil-hidden", path.c_str(), "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
                                "size=4k,mode=0555")) == 0 &&
                all;
        }
        if (all && !hidden_.empty()) layers |= kSandboxHidden;
        if (policy_.read_only_mounts && MakeMountsReadOnly(writable_, shm_readable_)) layers |= kSandboxReadOnly;
        if (own_root && OwnRoot(root_paths_)) layers |= kSandboxOwnRoot;
      }
    } else if (net && ::unshare(CLONE_NEWNET) == 0) {
      layers |= kSandboxNetNs;
    }
  } else if (net && ::unshare(CLONE_NEWNET) == 0) {
    layers |= kSandboxNetNs;
  }

  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return layers;
  if (ruleset_fd_ >= 0 && syscall(SYS_landlock_restrict_self, ruleset_fd_, 0) == 0) {
    layers |= kSandboxLandlock | (signal_scoped_ ? static_cast<uint32_t>(kSandboxSignals) : 0u);
  }
  if (policy_.forbid_syscalls &&
      InstallSeccomp(parent, parent_group, also_protected, !exec_follows, policy_.allow_processes))
    layers |= kSandboxSeccomp;
  return layers;
}

}  // namespace anvil

// For a child forked by a process that is not anvil (core/zygote.h): enters
// the sandbox `description` (Sandbox::Describe) describes, around the ruleset
// descriptor it was handed; `forker` (the zygote) is protected from signals
// like anvil. The child runs its worker in-process, so no exec follows:
// execve is forbidden from here on. The layers applied; ~0u for a malformed
// text.
extern "C" uint32_t anvil_sandbox_enter(const char* description, int ruleset_fd, int parent, int parent_group,
                                        int forker) {
  auto box = anvil::Sandbox::FromDescription(description, ruleset_fd);
  if (!box) return ~0u;
  return box->EnterInChild(parent, parent_group, forker, /*exec_follows=*/false);
}
