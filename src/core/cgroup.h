// Quotas of one job's processes, kept by the kernel's control groups: each
// job gets a group of its own per controller, nested under anvil's own group
// (never at a hierarchy's root, which would escape the operator's limits):
//   memory  cgroup v1's memory controller (memory.limit_in_bytes), or v2's
//           memory.max where v2's controllers are delegated to anvil's group;
//           the kernel kills a process of the job that needs more (OOM), and
//           the group's counters say so;
//   pids    processes and threads at once (pids.max): a fork or a thread
//           past it fails (RLIMIT_NPROC is not enforced for root).
// A child joins the group itself, first thing after fork and before any code
// of the job runs, by writing "0" to each of join_fds() (async-signal-safe);
// RunProcess does that for a ProcessSpec with a `cgroup` (core/subprocess.h).
// Whatever is left of the job when the JobCgroup is destroyed is killed,
// also processes that left the job's process group (setsid).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"

namespace anvil {

struct JobQuota {
  std::uint64_t memory_bytes = 0;  // 0: no memory quota.
  int pids = 0;                    // Processes and threads at once; 0: none.
  // CPU seconds of each process (RLIMIT_CPU, set by its sandbox, not a
  // control group): SIGXCPU past it; 0: none.
  std::uint64_t cpu_seconds = 0;
  // Device memory of the run's processes together (NVML's per-process
  // accounting, run/device_memory.h; not a control group): killed past it;
  // 0: none.
  std::uint64_t device_memory_bytes = 0;
  // memory_bytes is anvil's share of the machine (--quota-memory auto), not
  // a size the user asked for.
  bool memory_automatic = false;

  bool any() const { return memory_bytes > 0 || pids > 0; }
};

// "went over its memory quota of 256 MiB and the kernel killed it": what a
// job's OOM kill (JobUsage::oom_kills) says after its subject.
std::string OverMemoryQuota(const JobQuota& quota);

// What the kernel counted for a job, read after (or while) it runs.
struct JobUsage {
  std::uint64_t memory_peak_bytes = 0;
  bool memory_limit_hit = false;  // An allocation met the memory quota.
  int oom_kills = 0;              // Processes the kernel killed for the quota.
  bool pids_limit_hit = false;    // A fork or clone was refused at the quota.
};

class JobCgroup {
 public:
  // The controllers this machine lets anvil use, e.g. "memory (cgroup v1),
  // pids (cgroup v1)", or "none (...)" saying why.
  static std::string Mechanisms();
  // Whether a quota of each kind can be kept here.
  static bool CanLimitMemory();
  static bool CanLimitPids();
  // The memory anvil may use: the machine's, or less where anvil's own
  // memory group has a limit.
  static std::uint64_t MemoryAvailable();

  // A group for one job with `quota`; an error when a controller the quota
  // needs is not available or its group cannot be made.
  static Result<std::unique_ptr<JobCgroup>> Create(const JobQuota& quota);
  ~JobCgroup();  // KillAll, then the groups are removed.
  JobCgroup(const JobCgroup&) = delete;
  JobCgroup& operator=(const JobCgroup&) = delete;

  // cgroup.procs of each of the job's groups, open for writing (close-on-exec).
  const std::vector<int>& join_fds() const { return join_fds_; }
  const JobQuota& quota() const { return quota_; }
  // The job's group in each hierarchy it uses.
  std::vector<std::filesystem::path> directories() const;
  JobUsage Usage() const;
  // The job's processes now (in its memory group, else its pids group).
  std::vector<pid_t> Processes() const;
  // SIGKILLs every process of the job until none is left (bounded wait).
  void KillAll() const;

 private:
  JobCgroup() = default;

  struct Group {
    std::filesystem::path dir;
    bool v2 = false;
    bool memory = false;  // Which controller this group is for.
  };
  JobQuota quota_;
  std::vector<Group> groups_;
  std::vector<int> join_fds_;
};

}  // namespace anvil
