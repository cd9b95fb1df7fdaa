#include "core/cgroup.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

namespace anvil {
namespace fs = std::filesystem;

namespace {

// Where anvil may make groups for one controller: its own group in the
// hierarchy that holds the controller.
struct Hierarchy {
  fs::path own;  // Empty when the controller cannot be used.
  bool v2 = false;
  std::string why;   // Why not, when own is empty.
  std::string note;  // How anvil got it, when it had to act (cgroup v2 delegation).
};

// The cgroup v2 group anvil moves its group's processes into so that its
// group may hand controllers down (the no-internal-process rule).
constexpr const char* kLeaf = "anvil-leaf";

struct Hierarchies {
  Hierarchy memory, pids;
};

std::string ReadSmall(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool WriteSmall(const fs::path& path, const std::string& value) {
  const int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = write(fd, value.data(), value.size()) == static_cast<ssize_t>(value.size());
  close(fd);
  return ok;
}

// "key N" lines (memory.oom_control, memory.events, pids.events): N for key.
std::uint64_t KeyedValue(const std::string& text, const std::string& key) {
  std::istringstream in(text);
  std::string k;
  std::uint64_t v = 0;
  while (in >> k >> v) {
    if (k == key) return v;
  }
  return 0;
}

std::uint64_t Number(const std::string& text) {
  try {
    return std::stoull(text);
  } catch (...) {
    return 0;
  }
}

bool HasWord(const std::string& list, const std::string& word, char sep) {
  std::string item;
  std::istringstream in(list);
  while (std::getline(in, item, sep)) {
    if (item == word) return true;
  }
  return false;
}

// Whether a whitespace-separated list (cgroup.controllers) holds `word`.
bool HasToken(const std::string& list, const std::string& word) {
  std::istringstream in(list);
  std::string item;
  while (in >> item) {
    if (item == word) return true;
  }
  return false;
}

// A path of a group, under a mount whose root in the hierarchy is `root`.
fs::path UnderMount(const fs::path& mount_point, const std::string& root, const std::string& group) {
  std::string rel = group;
  if (root != "/" && rel.rfind(root, 0) == 0) rel = rel.substr(root.size());
  while (!rel.empty() && rel.front() == '/') rel.erase(0, 1);
  return rel.empty() ? mount_point : mount_point / rel;
}

// Whether a group can be made (and removed) below `own`: tried, not guessed
// from permissions (a read-only cgroup mount passes access(W_OK) as root).
bool CanMakeGroupIn(const fs::path& own) {
  const fs::path probe = own / ("anvil-probe-" + std::to_string(getpid()));
  if (mkdir(probe.c_str(), 0755) != 0 && errno != EEXIST) return false;
  const int saved = errno;
  (void)rmdir(probe.c_str());
  errno = saved;
  return true;
}

// Hands memory and pids (those `own` has) down to the groups below `own`:
// every process of `own` (anvil, and whatever started it) moves into
// own/anvil-leaf first, since cgroup v2 lets a group with processes of its
// own enable no controller for its children. Retried while processes keep
// arriving. Returns what was done, or an error naming the step that failed.
Result<std::string> DelegateV2(const fs::path& own) {
  const std::string available = ReadSmall(own / "cgroup.controllers");
  std::string enable;
  for (const char* c : {"memory", "pids"}) {
    if (HasToken(available, c)) enable += std::string(enable.empty() ? "" : " ") + "+" + c;
  }
  const fs::path leaf = own / kLeaf;
  if (mkdir(leaf.c_str(), 0755) != 0 && errno != EEXIST) {
    return Status::Error("cannot make " + leaf.string() + " (" + std::strerror(errno) + ")");
  }
  int moved = 0;
  for (int round = 0; round < 20; ++round) {
    std::istringstream procs(ReadSmall(own / "cgroup.procs"));
    pid_t pid;
    while (procs >> pid) {
      if (WriteSmall(leaf / "cgroup.procs", std::to_string(pid))) {
        ++moved;
      } else if (errno != ESRCH) {
        return Status::Error("cannot move process " + std::to_string(pid) + " into " + leaf.string() + " (" +
                             std::strerror(errno) + ")");
      }
    }
    if (WriteSmall(own / "cgroup.subtree_control", enable)) {
      return std::to_string(moved) + " process(es) of " + own.string() + " moved into " + kLeaf + " to enable it below";
    }
    if (errno != EBUSY) {
      return Status::Error("cannot write \"" + enable + "\" to " + (own / "cgroup.subtree_control").string() + " (" +
                           std::strerror(errno) + ")");
    }
  }
  return Status::Error(own.string() + " kept gaining processes while anvil moved them into " + kLeaf);
}

Hierarchies Discover() {
  // Which group this process is in, per hierarchy.
  std::map<std::string, std::string> v1_group;  // Controller -> group path.
  std::string v2_group;
  bool in_v2 = false;
  {
    std::istringstream in(ReadSmall("/proc/self/cgroup"));
    std::string line;
    while (std::getline(in, line)) {
      const auto a = line.find(':'), b = line.find(':', a + 1);
      if (a == std::string::npos || b == std::string::npos) continue;
      const std::string controllers = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
      if (line.substr(0, a) == "0" && controllers.empty()) {
        v2_group = path;
        in_v2 = true;
        continue;
      }
      std::istringstream names(controllers);
      std::string name;
      while (std::getline(names, name, ',')) v1_group[name] = path;
    }
  }
  // Where each hierarchy is mounted (mountinfo: ... root mountpoint ... - fstype source options).
  std::map<std::string, std::pair<fs::path, std::string>> v1_mount;  // Controller -> (mount point, root).
  std::pair<fs::path, std::string> v2_mount;
  {
    std::istringstream in(ReadSmall("/proc/self/mountinfo"));
    std::string line;
    while (std::getline(in, line)) {
      std::istringstream f(line);
      std::string id, parent, dev, root, point;
      f >> id >> parent >> dev >> root >> point;
      const auto dash = line.find(" - ");
      if (dash == std::string::npos) continue;
      std::istringstream tail(line.substr(dash + 3));
      std::string type, source, options;
      tail >> type >> source >> options;
      if (type == "cgroup2" && v2_mount.first.empty()) {
        v2_mount = {point, root};
      } else if (type == "cgroup") {
        for (const char* c : {"memory", "pids"}) {
          if (HasWord(options, c, ',') && !v1_mount.count(c)) v1_mount[c] = {point, root};
        }
      }
    }
  }
  auto find = [&](const std::string& controller) {
    Hierarchy h;
    if (v1_mount.count(controller) && v1_group.count(controller)) {
      const auto& [point, root] = v1_mount[controller];
      const fs::path own = UnderMount(point, root, v1_group[controller]);
      if (CanMakeGroupIn(own)) {
        h.own = own;
      } else {
        h.why = controller + " (cgroup v1): cannot make a group in " + own.string() + " (" + std::strerror(errno) + ")";
      }
      return h;
    }
    if (in_v2 && !v2_mount.first.empty()) {
      fs::path own = UnderMount(v2_mount.first, v2_mount.second, v2_group);
      // A leaf an earlier anvil moved its group into: the group above it is the
      // one that hands controllers down.
      if (own.filename() == kLeaf) own = own.parent_path();
      if (!HasToken(ReadSmall(own / "cgroup.subtree_control"), controller)) {
        // Groups below anvil's get the controller only where anvil's group
        // hands it down; where the group has it, anvil delegates it.
        if (!HasToken(ReadSmall(own / "cgroup.controllers"), controller)) {
          h.why = controller + " (cgroup v2): not available to " + own.string() + " (its cgroup.controllers lacks it)";
          return h;
        }
        auto delegated = DelegateV2(own);
        if (!delegated.ok()) {
          h.why = controller + " (cgroup v2): not delegated to " + own.string() + ": " + delegated.message();
          return h;
        }
        h.note = delegated.value();
      }
      if (!CanMakeGroupIn(own)) {
        h.why = controller + " (cgroup v2): cannot make a group in " + own.string() + " (" + std::strerror(errno) + ")";
      } else {
        h.own = own;
        h.v2 = true;
      }
      return h;
    }
    h.why = controller + ": no cgroup hierarchy holds it";
    return h;
  };
  return {find("memory"), find("pids")};
}

const Hierarchies& Known() {
  static const Hierarchies h = Discover();
  return h;
}

// anvil-<pid> under each hierarchy's own group, made once per process; the
// groups of processes that died without removing theirs are removed first.
class Bases {
 public:
  static Bases& Get() {
    static Bases b;
    return b;
  }
  Result<fs::path> For(const Hierarchy& h) {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = made_.find(h.own); it != made_.end()) return it->second;
    RemoveStale(h.own);
    const fs::path base = h.own / ("anvil-" + std::to_string(getpid()));
    if (mkdir(base.c_str(), 0755) != 0 && errno != EEXIST) {
      return Status::Error("cannot make the control group " + base.string() + ": " + std::strerror(errno));
    }
    if (h.v2) {
      // Children of the base get the controllers the base has.
      const std::string controllers = ReadSmall(base / "cgroup.controllers");
      std::string enable;
      for (const char* c : {"memory", "pids"}) {
        if (HasToken(controllers, c)) enable += std::string("+") + c + " ";
      }
      if (!enable.empty()) (void)WriteSmall(base / "cgroup.subtree_control", enable);
    }
    made_[h.own] = base;
    owner_ = getpid();
    return base;
  }
  ~Bases() {
    if (getpid() != owner_) return;  // A forked child's copy.
    for (const auto& [own, base] : made_) (void)rmdir(base.c_str());
  }

 private:
  static void RemoveStale(const fs::path& own) {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(own, ec)) {
      const std::string name = entry.path().filename().string();
      if (name.rfind("anvil-", 0) != 0) continue;
      const pid_t pid = static_cast<pid_t>(Number(name.substr(6)));
      if (pid <= 0 || pid == getpid() || kill(pid, 0) == 0 || errno != ESRCH) continue;
      std::error_code ec2;
      for (const auto& job : fs::directory_iterator(entry.path(), ec2)) {
        if (job.is_directory()) (void)rmdir(job.path().c_str());
      }
      (void)rmdir(entry.path().c_str());
    }
  }

  std::mutex mu_;
  std::map<fs::path, fs::path> made_;
  pid_t owner_ = 0;
};

std::atomic<std::uint64_t> next_job{1};

}  // namespace

std::string OverMemoryQuota(const JobQuota& quota) {
  char size[32];
  if (quota.memory_bytes >= (std::uint64_t{1} << 30)) {
    std::snprintf(size, sizeof size, "%.3g GiB", static_cast<double>(quota.memory_bytes) / (1 << 30));
  } else {
    std::snprintf(size, sizeof size, "%llu MiB", static_cast<unsigned long long>(quota.memory_bytes >> 20));
  }
  return std::string("went over its memory quota of ") + size + " and the kernel killed it";
}

bool JobCgroup::CanLimitMemory() { return !Known().memory.own.empty(); }

std::uint64_t JobCgroup::MemoryAvailable() {
  std::uint64_t total = 0;
  {
    std::istringstream in(ReadSmall("/proc/meminfo"));
    std::string key;
    std::uint64_t kib = 0;
    std::string unit;
    while (in >> key >> kib >> unit) {
      if (key == "MemTotal:") {
        total = kib * 1024;
        break;
      }
    }
  }
  const Hierarchy& m = Known().memory;
  if (!m.own.empty()) {
    // Limits of anvil's group and of the groups above it within the mount.
    for (fs::path dir = m.own; !dir.empty(); dir = dir.parent_path()) {
      const std::uint64_t limit =
          Number(ReadSmall(dir / (m.v2 ? "memory.max" : "memory.limit_in_bytes")));  // "max" reads as 0.
      if (limit > 0 && (total == 0 || limit < total)) total = limit;
      if (dir == dir.parent_path() || !fs::exists(dir.parent_path() / "cgroup.procs")) break;
    }
  }
  return total;
}
bool JobCgroup::CanLimitPids() { return !Known().pids.own.empty(); }

std::string JobCgroup::Mechanisms() {
  const Hierarchies& h = Known();
  std::vector<std::string> yes, no;
  for (const auto& [name, one] : {std::pair<const char*, const Hierarchy*>{"memory", &h.memory}, {"pids", &h.pids}}) {
    if (!one->own.empty()) {
      yes.push_back(std::string(name) + (one->v2 ? " (cgroup v2" : " (cgroup v1") +
                    (one->note.empty() ? "" : ": " + one->note) + ")");
    } else {
      no.push_back(one->why);
    }
  }
  std::string out;
  for (const auto& y : yes) out += (out.empty() ? "" : ", ") + y;
  if (out.empty()) out = "none";
  if (!no.empty()) {
    out += " (not: ";
    for (std::size_t i = 0; i < no.size(); ++i) out += (i ? "; " : "") + no[i];
    out += ")";
  }
  return out;
}

Result<std::unique_ptr<JobCgroup>> JobCgroup::Create(const JobQuota& quota) {
  std::unique_ptr<JobCgroup> job(new JobCgroup());
  job->quota_ = quota;
  const Hierarchies& known = Known();
  const std::string name = "job-" + std::to_string(next_job++);
  auto make = [&](const Hierarchy& h, bool memory) -> Status {
    if (h.own.empty()) return Status::Error("no " + std::string(memory ? "memory" : "pids") + " quota here: " + h.why);
    auto base = Bases::Get().For(h);
    if (!base.ok()) return base.status();
    const fs::path dir = base.value() / name;
    if (mkdir(dir.c_str(), 0755) != 0) {
      return Status::Error("cannot make the control group " + dir.string() + ": " + std::strerror(errno));
    }
    job->groups_.push_back({dir, h.v2, memory});
    bool set = true;
    if (memory) {
      const std::string bytes = std::to_string(quota.memory_bytes);
      if (h.v2) {
        set = WriteSmall(dir / "memory.max", bytes);
        if (fs::exists(dir / "memory.swap.max")) (void)WriteSmall(dir / "memory.swap.max", "0");
      } else {
        set = WriteSmall(dir / "memory.limit_in_bytes", bytes);
        // With swap, memory+swap gets the same bound (no swapping past it).
        if (fs::exists(dir / "memory.memsw.limit_in_bytes")) {
          (void)WriteSmall(dir / "memory.memsw.limit_in_bytes", bytes);
        }
      }
    } else {
      set = WriteSmall(dir / "pids.max", std::to_string(quota.pids));
    }
    if (!set) return Status::Error("cannot set the quota of " + dir.string() + ": " + std::strerror(errno));
    const int fd = open((dir / "cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return Status::Error("cannot open " + (dir / "cgroup.procs").string() + ": " + std::strerror(errno));
    job->join_fds_.push_back(fd);
    return Status::Ok();
  };
  if (quota.memory_bytes > 0) {
    if (Status s = make(known.memory, true); !s.ok()) return s;
  }
  if (quota.pids > 0) {
    if (Status s = make(known.pids, false); !s.ok()) return s;
  }
  return job;
}

JobCgroup::~JobCgroup() {
  KillAll();
  for (int fd : join_fds_) close(fd);
  for (const Group& g : groups_) {
    // A group is removable once its last process has exited.
    for (int i = 0; i < 100 && rmdir(g.dir.c_str()) != 0 && errno == EBUSY; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
}

std::vector<fs::path> JobCgroup::directories() const {
  std::vector<fs::path> out;
  for (const Group& g : groups_) out.push_back(g.dir);
  return out;
}

std::vector<pid_t> JobCgroup::Processes() const {
  std::set<pid_t> all;
  for (const Group& g : groups_) {
    std::istringstream in(ReadSmall(g.dir / "cgroup.procs"));
    pid_t pid;
    while (in >> pid) all.insert(pid);
  }
  return {all.begin(), all.end()};
}

void JobCgroup::KillAll() const {
  for (int round = 0; round < 200; ++round) {
    const std::vector<pid_t> left = Processes();
    if (left.empty()) return;
    for (pid_t pid : left) kill(pid, SIGKILL);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

JobUsage JobCgroup::Usage() const {
  JobUsage u;
  for (const Group& g : groups_) {
    if (g.memory && g.v2) {
      u.memory_peak_bytes = Number(ReadSmall(g.dir / "memory.peak"));
      const std::string events = ReadSmall(g.dir / "memory.events");
      u.memory_limit_hit = KeyedValue(events, "max") > 0 || KeyedValue(events, "oom") > 0;
      u.oom_kills = static_cast<int>(KeyedValue(events, "oom_kill"));
    } else if (g.memory) {
      u.memory_peak_bytes = Number(ReadSmall(g.dir / "memory.max_usage_in_bytes"));
      u.oom_kills = static_cast<int>(KeyedValue(ReadSmall(g.dir / "memory.oom_control"), "oom_kill"));
      u.memory_limit_hit = Number(ReadSmall(g.dir / "memory.failcnt")) > 0 || u.oom_kills > 0;
    } else {
      u.pids_limit_hit = KeyedValue(ReadSmall(g.dir / "pids.events"), "max") > 0;
    }
  }
  return u;
}

}  // namespace anvil
