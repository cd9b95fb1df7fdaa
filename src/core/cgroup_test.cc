#include "core/cgroup.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/python.h"
#include "core/subprocess.h"
#include "core/zygote.h"

namespace anvil {
namespace {

namespace fs = std::filesystem;

// Each case runs inside the quota it tests, so a quota that did not hold
// costs this machine little: 200 MiB, or 30 short sleeps.
constexpr std::uint64_t kMiB = 1 << 20;

ProcessSpec Shell(const std::string& script) {
  ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c", script};
  return spec;
}

// A process that has ended, or whose only trace is its zombie.
bool Gone(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return true;
  std::string id, name, state;
  stat >> id >> name >> state;
  return state == "Z" || state == "X";
}

std::shared_ptr<JobCgroup> Group(const JobQuota& quota) {
  auto g = JobCgroup::Create(quota);
  EXPECT_TRUE(g.ok()) << g.message();
  return g.ok() ? std::shared_ptr<JobCgroup>(std::move(g.value())) : nullptr;
}

// The cases below need both controllers (this machine and CI's have cgroup
// v1's); elsewhere they skip, saying why.
#define NEED_QUOTAS()                                                              \
  if (!JobCgroup::CanLimitMemory() || !JobCgroup::CanLimitPids()) {                \
    GTEST_SKIP() << "no memory and pids quotas here: " << JobCgroup::Mechanisms(); \
  }

TEST(CgroupTest, MechanismsNameWhatThisMachineAllows) {
  const std::string m = JobCgroup::Mechanisms();
  EXPECT_EQ(m.find("memory (cgroup") != std::string::npos, JobCgroup::CanLimitMemory()) << m;
  EXPECT_EQ(m.find("pids (cgroup") != std::string::npos, JobCgroup::CanLimitPids()) << m;
  if (JobCgroup::CanLimitMemory()) {
    EXPECT_GT(JobCgroup::MemoryAvailable(), std::uint64_t{256} << 20);
  }
}

TEST(CgroupTest, AnAllocationPastTheMemoryQuotaIsKilledAndCounted) {
  NEED_QUOTAS();
  auto group = Group({64 * kMiB, 0});
  ASSERT_NE(group, nullptr);
  ProcessSpec bomb = Shell("exec python3 -c \"b = b'x' * (200 << 20); print('survived')\"");
  bomb.cgroup = group;
  auto r = RunProcess(bomb);
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_NE(r.value().sandbox_layers & kSandboxCgroup, 0u);
  EXPECT_EQ(r.value().term_signal, SIGKILL) << r.value().Describe() << r.value().out;
  const JobUsage u = group->Usage();
  EXPECT_GE(u.oom_kills, 1);
  EXPECT_TRUE(u.memory_limit_hit);
  EXPECT_LE(u.memory_peak_bytes, 64 * kMiB);

  // Its honest twin, under the same quota, runs to its end.
  auto twin_group = Group({64 * kMiB, 0});
  ASSERT_NE(twin_group, nullptr);
  ProcessSpec twin = Shell("exec python3 -c \"b = b'x' * (8 << 20); print('survived')\"");
  twin.cgroup = twin_group;
  auto t = RunProcess(twin);
  ASSERT_TRUE(t.ok()) << t.message();
  EXPECT_EQ(t.value().exit_code, 0) << t.value().err;
  EXPECT_EQ(t.value().out, "survived\n");
  EXPECT_EQ(twin_group->Usage().oom_kills, 0);
  EXPECT_GE(twin_group->Usage().memory_peak_bytes, 8 * kMiB);
}

TEST(CgroupTest, ForksPastThePidsQuotaFail) {
  NEED_QUOTAS();
  auto group = Group({0, 8});
  ASSERT_NE(group, nullptr);
  // 30 background sleeps: the shell and 7 of them fit; the rest fail to fork.
  ProcessSpec bomb = Shell("for i in $(seq 30); do sleep 30 & done 2>/dev/null; echo started");
  bomb.cgroup = group;
  auto r = RunProcess(bomb);
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_NE(r.value().sandbox_layers & kSandboxCgroup, 0u);
  EXPECT_TRUE(group->Usage().pids_limit_hit);
  EXPECT_LE(group->Processes().size(), 8u);
}

TEST(CgroupTest, AProcessThatLeftItsProcessGroupStillDiesWithTheJob) {
  NEED_QUOTAS();
  pid_t escaped = 0;
  {
    auto group = Group({256 * kMiB, 16});
    ASSERT_NE(group, nullptr);
    // The shell waits until its child is in a session of its own (setsid has
    // run), so that only the group's end can reach it.
    const std::string file = "/tmp/anvil-cgroup-test-" + std::to_string(getpid());
    ProcessSpec spec = Shell("rm -f " + file + "; setsid sh -c 'echo $$ > " + file +
                             "; exec sleep 60' </dev/null >/dev/null 2>&1 & while [ ! -s " + file +
                             " ]; do sleep 0.01; done; cat " + file + "; rm -f " + file);
    spec.cgroup = group;
    auto r = RunProcess(spec);
    ASSERT_TRUE(r.ok()) << r.message();
    escaped = static_cast<pid_t>(std::stol(r.value().out));
    ASSERT_FALSE(Gone(escaped));
    const auto procs = group->Processes();
    EXPECT_NE(std::find(procs.begin(), procs.end(), escaped), procs.end());
  }
  EXPECT_TRUE(Gone(escaped));
}

// A group removed under the job (an operator's cleanup, say): the child
// cannot join it, and does not run unconfined; the failure is anvil's.
TEST(CgroupTest, AGroupThatCannotBeJoinedIsAnErrorNotAnUnlimitedRun) {
  NEED_QUOTAS();
  for (bool python : {false, true}) {
    auto group = Group({64 * kMiB, 8});
    ASSERT_NE(group, nullptr);
    for (const fs::path& dir : group->directories()) ASSERT_EQ(rmdir(dir.c_str()), 0) << dir;
    ProcessSpec spec = python ? PythonWorkerSpec("zygote_probe", {"alloc", "1"}) : Shell("echo ran");
    spec.cgroup = group;
    auto r = RunProcess(spec);
    ASSERT_FALSE(r.ok()) << (python ? "zygote: " : "fork: ") << r.value().out;
    EXPECT_NE(r.message().find("control group"), std::string::npos) << r.message();
  }
}

TEST(CgroupTest, ZygoteWorkersJoinTheirGroupBeforeTheyRun) {
  NEED_QUOTAS();
  ASSERT_NE(Zygote::Shared(), nullptr) << "the zygote did not start";
  auto group = Group({256 * kMiB, 64});
  ASSERT_NE(group, nullptr);
  ProcessSpec bomb = PythonWorkerSpec("zygote_probe", {"alloc", "1024"});
  bomb.cgroup = group;
  auto r = RunProcess(bomb);
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_NE(r.value().sandbox_layers & kSandboxCgroup, 0u);
  EXPECT_EQ(r.value().term_signal, SIGKILL) << r.value().Describe() << r.value().out << r.value().err;
  EXPECT_GE(group->Usage().oom_kills, 1);

  auto twin_group = Group({256 * kMiB, 64});
  ASSERT_NE(twin_group, nullptr);
  ProcessSpec twin = PythonWorkerSpec("zygote_probe", {"alloc", "16"});
  twin.cgroup = twin_group;
  auto t = RunProcess(twin);
  ASSERT_TRUE(t.ok()) << t.message();
  EXPECT_EQ(t.value().exit_code, 0) << t.value().err;
  EXPECT_EQ(t.value().out, "allocated 16\n");
  EXPECT_NE(t.value().sandbox_layers & kSandboxCgroup, 0u);
}

}  // namespace
}  // namespace anvil
