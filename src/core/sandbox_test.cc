#include "core/sandbox.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <string>

#include "core/environment.h"
#include "core/files.h"
#include "core/subprocess.h"
#include "core/temp_dir_fixture.h"

namespace anvil {
namespace {

namespace fs = std::filesystem;

// Real programs in a real sandbox: the attempts a hostile candidate makes.
class SandboxTest : public TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    fs::create_directories(dir_ / "allowed");
    fs::create_directories(dir_ / "scratch");
    secret_ = Write("secret/expected.bin", "the reference outputs");
    Write("allowed/input.txt", "inputs");
  }

  SandboxPolicy Policy() const {
    SandboxPolicy p;
    p.read_only = {"/usr", "/bin", "/lib", "/lib64", "/etc", "/proc", "/dev", dir_ / "allowed"};
    p.read_write = {dir_ / "scratch"};
    p.max_file_bytes = 1 << 20;
    return p;
  }

  ProcessResult Run(std::vector<std::string> argv, const SandboxPolicy& policy) {
    auto box = Sandbox::Prepare(policy);
    EXPECT_TRUE(box.ok()) << box.message();
    ProcessSpec spec;
    spec.argv = std::move(argv);
    spec.sandbox = box.value();
    spec.deadline = std::chrono::seconds(20);
    spec.working_dir = (dir_ / "scratch").string();  // As a candidate's: the `root` layer keeps it.
    auto r = RunProcess(spec);
    EXPECT_TRUE(r.ok()) << r.message();
    return r.ok() ? r.value() : ProcessResult{};
  }

  bool HasLandlock() { return Sandbox::Prepare(Policy()).value()->landlock_abi() > 0; }

  fs::path secret_;
};

TEST_F(SandboxTest, PlainProgramRunsAndLayersAreReported) {
  ProcessResult r = Run({"/bin/cat", (dir_ / "allowed/input.txt").string()}, Policy());
  EXPECT_TRUE(r.Succeeded()) << r.Describe() << r.err;
  EXPECT_EQ(r.out, "inputs");
  EXPECT_TRUE(r.sandbox_layers & kSandboxSeccomp);
  EXPECT_TRUE(r.sandbox_layers & kSandboxRlimits);
  if (HasLandlock()) EXPECT_TRUE(r.sandbox_layers & kSandboxLandlock);
  auto names = SandboxLayerNames(r.sandbox_layers);
  EXPECT_NE(std::find(names.begin(), names.end(), "seccomp"), names.end());
}

TEST_F(SandboxTest, ReadingOutsideTheAllowedPathsIsDenied) {
  if (!HasLandlock()) GTEST_SKIP() << "this kernel has no Landlock";
  ProcessResult r = Run({"/bin/cat", secret_.string()}, Policy());
  EXPECT_FALSE(r.Succeeded());
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("Permission denied"), std::string::npos) << r.err;
  // The same file is readable without the sandbox.
  ProcessSpec plain;
  plain.argv = {"/bin/cat", secret_.string()};
  EXPECT_EQ(RunProcess(plain).value().out, "the reference outputs");
}

TEST_F(SandboxTest, WritingOnlyInsideTheScratch) {
  if (!HasLandlock()) GTEST_SKIP() << "this kernel has no Landlock";
  EXPECT_TRUE(Run({"/usr/bin/touch", (dir_ / "scratch/ok").string()}, Policy()).Succeeded());
  EXPECT_TRUE(fs::exists(dir_ / "scratch/ok"));
  ProcessResult r = Run({"/usr/bin/touch", (dir_ / "allowed/planted.py").string()}, Policy());
  EXPECT_FALSE(r.Succeeded());
  EXPECT_FALSE(fs::exists(dir_ / "allowed/planted.py"));
}

TEST_F(SandboxTest, CreatingAProcessKillsTheCandidate) {
  // The shell must fork to run a command that is not its last.
  ProcessResult r = Run({"/bin/sh", "-c", "/bin/true; echo after"}, Policy());
  EXPECT_EQ(r.term_signal, SIGSYS) << r.Describe() << r.out << r.err;
  EXPECT_EQ(r.out.find("after"), std::string::npos);
}

TEST_F(SandboxTest, NetworkSocketsKillTheCandidate) {
  ProcessResult r =
      Run({"/usr/bin/python3", "-c", "import socket; socket.socket(socket.AF_INET); print('open')"}, Policy());
  EXPECT_EQ(r.term_signal, SIGSYS) << r.Describe() << r.out << r.err;
  // Local sockets stay allowed.
  r = Run({"/usr/bin/python3", "-c", "import socket; socket.socket(socket.AF_UNIX); print('unix')"}, Policy());
  EXPECT_TRUE(r.Succeeded()) << r.Describe() << r.err;
}

TEST_F(SandboxTest, SignallingTheParentKillsTheCandidate) {
  ProcessResult r = Run({"/usr/bin/python3", "-c", "import os; os.kill(os.getppid(), 0)"}, Policy());
  EXPECT_EQ(r.term_signal, SIGSYS) << r.Describe() << r.err;
  r = Run({"/usr/bin/python3", "-c", "import os, signal; os.kill(-1, signal.SIGTERM)"}, Policy());
  EXPECT_EQ(r.term_signal, SIGSYS) << r.Describe() << r.err;
  // tkill by thread id: the parent's main thread has its process id.
  r = Run({"/usr/bin/python3", "-c", "import ctypes, os; ctypes.CDLL(None).syscall(200, os.getppid(), 0)"}, Policy());
  EXPECT_EQ(r.term_signal, SIGSYS) << r.Describe() << r.err;
  // Its own process is fine.
  r = Run({"/usr/bin/python3", "-c", "import os; os.kill(os.getpid(), 0); print('self')"}, Policy());
  EXPECT_TRUE(r.Succeeded()) << r.Describe() << r.err;
}

TEST_F(SandboxTest, WithLandlockSignalsStayInsideTheSandbox) {
  // A process of the same user outside anvil's group (another candidate, a daemon): seccomp lets the signal
  // through, and so does the user check (a user namespace maps the child to the same user). Landlock's signal
  // scope (ABI 6) stops it. Returns what the sandboxed child printed ("sent" or "refused") and its layers.
  auto try_to_signal = [&](const SandboxPolicy& policy) {
    pid_t other = fork();
    EXPECT_GE(other, 0);
    if (other == 0) {
      setsid();
      pause();
      _exit(0);
    }
    const std::string script = "import os, signal\ntry:\n    os.kill(" + std::to_string(other) +
                               ", signal.SIGTERM)\n    print('sent')\nexcept PermissionError:\n    print('refused')\n";
    ProcessResult r = Run({"/usr/bin/python3", "-c", script}, policy);
    EXPECT_TRUE(r.Succeeded()) << r.Describe() << r.err;
    ::kill(other, SIGKILL);
    ::waitpid(other, nullptr, 0);
    return std::make_pair(r.out, r.sandbox_layers);
  };
  auto [out, layers] = try_to_signal(Policy());
  if (Sandbox::Prepare(Policy()).value()->landlock_abi() < 6) GTEST_SKIP() << "Landlock before ABI 6";
  EXPECT_TRUE(layers & kSandboxLandlock);
  EXPECT_TRUE(layers & kSandboxSignals);
  EXPECT_EQ(out, "refused\n");
  // Its own signals still arrive.
  ProcessResult r = Run({"/usr/bin/python3", "-c", "import os; os.kill(os.getpid(), 0); print('self')"}, Policy());
  EXPECT_EQ(r.out, "self\n") << r.Describe() << r.err;
  // Without the scope (switch -signals), or without Landlock, the same signal goes through: the scope is what
  // stopped it.
  SandboxPolicy unscoped = Policy();
  unscoped.scope_signals = false;
  std::tie(out, layers) = try_to_signal(unscoped);
  EXPECT_TRUE(layers & kSandboxLandlock);
  EXPECT_FALSE(layers & kSandboxSignals);
  EXPECT_EQ(out, "sent\n");
  SandboxPolicy no_landlock = Policy();
  no_landlock.confine_files = false;
  std::tie(out, layers) = try_to_signal(no_landlock);
  EXPECT_FALSE(layers & kSandboxSignals);
  EXPECT_EQ(out, "sent\n");
}

// A worker forked by the zygote runs in-process: from the sandbox on, replacing the process's image (which would
// inherit the worker's descriptors: the timing pipes, the report) kills it, by either call.
TEST_F(SandboxTest, ExecKillsAChildThatRunsInProcess) {
  auto box = Sandbox::Prepare(Policy());
  ASSERT_TRUE(box.ok()) << box.message();
  for (long call : {static_cast<long>(SYS_execve), static_cast<long>(SYS_execveat)}) {
    const pid_t parent = ::getpid();
    pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      const uint32_t layers = box.value()->EnterInChild(parent, ::getpgrp(), 0, /*exec_follows=*/false);
      if (!(layers & kSandboxSeccomp)) _exit(2);
      char* const argv[] = {const_cast<char*>("/bin/true"), nullptr};
      char* const envp[] = {nullptr};
      if (call == SYS_execve) {
        syscall(SYS_execve, "/bin/true", argv, envp);
      } else {
        syscall(SYS_execveat, AT_FDCWD, "/bin/true", argv, envp, 0);
      }
      _exit(3);  // Not reached: the exec either kills or succeeds (/bin/true then exits 0).
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFSIGNALED(status)) << "syscall " << call << ": exit " << WEXITSTATUS(status);
    EXPECT_EQ(WTERMSIG(status), SIGSYS) << "syscall " << call;
  }
}

// An exec'd worker's sandbox must let its own exec through; the worker stacks the exec filter on itself
// (anvil_py/no_exec.py) before it runs candidate code.
TEST_F(SandboxTest, AnExecdWorkerForbidsExecBeforeCandidateCode) {
  SandboxPolicy policy = Policy();
  policy.read_only.push_back(PythonPackageDir());
  const std::string path = "import sys; sys.path.insert(0, '" + PythonPackageDir().string() + "')\n";
  const std::string exec = "import os; os.execv('/bin/echo', ['echo', 'replaced'])\n";
  ProcessResult r = Run({"/usr/bin/python3", "-c", path + exec}, policy);
  EXPECT_EQ(r.out, "replaced\n") << r.Describe() << r.err;  // What the worker closes.
  r = Run({"/usr/bin/python3", "-c",
           path + "from anvil_py.no_exec import forbid_exec\nprint(forbid_exec(), flush=True)\n" + exec},
          policy);
  EXPECT_EQ(r.term_signal, SIGSYS) << r.Describe() << r.out << r.err;
  EXPECT_EQ(r.out, "True\n") << r.err;
  // Outside the sandbox it does nothing.
  ProcessSpec plain;
  plain.argv = {"/usr/bin/python3", "-c", path + "from anvil_py.no_exec import forbid_exec\nprint(forbid_exec())\n"};
  EXPECT_EQ(RunProcess(plain).value().out, "False\n");
}

// Slowing another process of the same user (the zygote that forks the baselines) by its priority, scheduling,
// affinity or limits fails with EPERM; the same calls on the child itself (pid 0) still work.
TEST_F(SandboxTest, SchedulingOfOtherProcessesIsRefused) {
  errno = 0;
  const int nice_before = ::getpriority(PRIO_PROCESS, 0);
  ASSERT_EQ(errno, 0);
  cpu_set_t cpus_before;
  ASSERT_EQ(::sched_getaffinity(0, sizeof cpus_before, &cpus_before), 0);
  const std::string script = R"(import ctypes, os, platform, resource
libc = ctypes.CDLL(None, use_errno=True)
setattr_nr = {'x86_64': 314, 'aarch64': 274}[platform.machine()]
def sched_setattr(pid):
    attr = (ctypes.c_uint32 * 12)(48, 0, 0, 0, 5)  # struct sched_attr, size 48: SCHED_OTHER, nice 5 (as set).
    if libc.syscall(setattr_nr, pid, attr, 0) != 0:
        raise OSError(ctypes.get_errno(), 'sched_setattr')
def attempt(name, f):
    try:
        f()
        print(name, 'ok')
    except OSError as e:
        print(name, 'EPERM' if e.errno == 1 else e.errno)
def calls(pid, prio_who):
    other = os.sched_param(0)
    attempt('setpriority', lambda: os.setpriority(os.PRIO_PROCESS, pid, 19 if pid else 5))
    attempt('sched_setaffinity', lambda: os.sched_setaffinity(pid, {min(os.sched_getaffinity(0))}))
    attempt('sched_setscheduler', lambda: os.sched_setscheduler(pid, os.SCHED_OTHER, other))
    attempt('sched_setparam', lambda: os.sched_setparam(pid, other))
    attempt('sched_setattr', lambda: sched_setattr(pid))
    attempt('prlimit', lambda: resource.prlimit(pid, resource.RLIMIT_NOFILE))
pp = os.getppid()
print('parent')
calls(pp, pp)
attempt('prio_user', lambda: os.setpriority(os.PRIO_USER, 0, 0))
print('self')
calls(0, 0)
)";
  ProcessResult r = Run({"/usr/bin/python3", "-c", script}, Policy());
  ASSERT_TRUE(r.Succeeded()) << r.Describe() << r.err;
  EXPECT_EQ(r.out,
            "parent\nsetpriority EPERM\nsched_setaffinity EPERM\nsched_setscheduler EPERM\nsched_setparam EPERM\n"
            "sched_setattr EPERM\nprlimit EPERM\nprio_user EPERM\n"
            "self\nsetpriority ok\nsched_setaffinity ok\nsched_setscheduler ok\nsched_setparam ok\n"
            "sched_setattr ok\nprlimit ok\n")
      << r.err;
  errno = 0;
  EXPECT_EQ(::getpriority(PRIO_PROCESS, 0), nice_before);
  EXPECT_EQ(errno, 0);
  cpu_set_t cpus_after;
  ASSERT_EQ(::sched_getaffinity(0, sizeof cpus_after, &cpus_after), 0);
  EXPECT_TRUE(CPU_EQUAL(&cpus_before, &cpus_after));
}

TEST_F(SandboxTest, ThreadsStillWork) {
  ProcessResult r = Run({"/usr/bin/python3", "-c",
                         "import threading; t = threading.Thread(target=print, args=('thread',)); t.start(); t.join()"},
                        Policy());
  EXPECT_TRUE(r.Succeeded()) << r.Describe() << r.err;
  EXPECT_EQ(r.out, "thread\n");
}

TEST_F(SandboxTest, FileSizeIsCapped) {
  ProcessResult r =
      Run({"/bin/dd", "if=/dev/zero", "of=" + (dir_ / "scratch/big").string(), "bs=1M", "count=4"}, Policy());
  EXPECT_EQ(r.term_signal, SIGXFSZ) << r.Describe() << r.err;
  EXPECT_LE(fs::file_size(dir_ / "scratch/big"), 1u << 20);
}

TEST_F(SandboxTest, HiddenFoldersAreEmptyEvenWithoutLandlock) {
  SandboxPolicy policy = Policy();
  policy.confine_files = false;  // As on a machine whose GPU driver rejects Landlock.
  policy.hidden = {dir_ / "secret"};
  ProcessResult r = Run({"/bin/cat", secret_.string()}, policy);
  if (!(r.sandbox_layers & kSandboxUserNs)) GTEST_SKIP() << "no user namespaces here";
  EXPECT_TRUE(r.sandbox_layers & kSandboxHidden);
  EXPECT_FALSE(r.Succeeded());
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("No such file"), std::string::npos) << r.err;
  // Unmounting the cover is a forbidden system call.
  r = Run({"/bin/umount", (dir_ / "secret").string()}, policy);
  EXPECT_EQ(r.term_signal, SIGSYS) << r.Describe() << r.err;
}

TEST_F(SandboxTest, HiddenFilesReadEmptyEvenWithoutLandlockOrItsOwnRoot) {
  SandboxPolicy policy = Policy();
  policy.confine_files = false;  // As on a machine whose GPU driver rejects Landlock...
  policy.own_root = false;       // ...and a root of the listed paths.
  policy.hidden = {secret_};     // A file: the prepared task's secret seeds, say.
  ProcessResult r = Run({"/bin/cat", secret_.string()}, policy);
  if (!(r.sandbox_layers & kSandboxUserNs)) GTEST_SKIP() << "no user namespaces here";
  EXPECT_TRUE(r.sandbox_layers & kSandboxHidden) << r.Describe();
  EXPECT_EQ(r.out, "") << r.Describe();  // Empty, or not readable at all where /dev is nodev.
  policy.hidden.clear();
  r = Run({"/bin/cat", secret_.string()}, policy);  // Without the cover it reads.
  EXPECT_TRUE(r.Succeeded()) << r.Describe() << r.err;
  EXPECT_NE(r.out, "");
}

TEST_F(SandboxTest, WritesOutsideTheScratchFailEvenWithoutLandlock) {
  SandboxPolicy policy = Policy();
  policy.confine_files = false;  // As on a machine whose GPU driver rejects Landlock.
  ProcessResult r = Run({"/usr/bin/touch", (dir_ / "scratch/ok").string()}, policy);
  if (!(r.sandbox_layers & kSandboxUserNs)) GTEST_SKIP() << "no user namespaces here";
  EXPECT_TRUE(r.sandbox_layers & kSandboxReadOnly) << r.Describe();
  EXPECT_TRUE(r.Succeeded()) << r.Describe() << r.err;
  EXPECT_TRUE(fs::exists(dir_ / "scratch/ok"));
  r = Run({"/usr/bin/touch", (dir_ / "allowed/planted.py").string()}, policy);
  EXPECT_FALSE(r.Succeeded());
  EXPECT_NE(r.err.find("Read-only file system"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "allowed/planted.py"));
  r = Run({"/bin/sh", "-c", "echo x > " + secret_.string()}, policy);  // Overwriting a reference output.
  EXPECT_FALSE(r.Succeeded());
  EXPECT_EQ(ReadFile(secret_).value(), "the reference outputs");
  // Without the layers the same write goes through: the test can fail.
  policy.read_only_mounts = false;
  policy.own_root = false;
  EXPECT_TRUE(Run({"/usr/bin/touch", (dir_ / "allowed/planted.py").string()}, policy).Succeeded());
  EXPECT_TRUE(fs::exists(dir_ / "allowed/planted.py"));
}

bool Under(const fs::path& path, const std::string& dir) { return path.string().rfind(dir + "/", 0) == 0; }

TEST_F(SandboxTest, WithoutLandlockTheChildGetsADevShmOfItsOwnWithItsScratchInIt) {
  // Another job's memory-backed scratch, and this child's own.
  const fs::path other = MakeScratchDir("anvil-test-other-", 1).value();
  const fs::path own = MakeScratchDir("anvil-test-own-", 1).value();
  if (!Under(other, "/dev/shm") || !Under(own, "/dev/shm")) {
    (void)RemoveTree(other);
    (void)RemoveTree(own);
    GTEST_SKIP() << "no /dev/shm scratch on this machine";
  }
  ASSERT_TRUE(WriteFileAtomic(other / "out0.bin", "their outputs").ok());
  // A streamed task's inputs: in the memory-backed work folder, readable only.
  fs::create_directories(other / "inputs");
  ASSERT_TRUE(WriteFileAtomic(other / "inputs" / "in0.bin", "inputs").ok());
  SandboxPolicy policy = Policy();
  policy.confine_files = false;
  policy.read_write.push_back(own);
  policy.read_only.push_back(other / "inputs");
  const std::string script = "read -r x < " + (other / "inputs/in0.bin").string() + "; echo \"$x\"; echo changed > " +
                             (other / "inputs/in0.bin").string() + "; echo /dev/shm/*; echo planted > " +
                             (other / "out0.bin").string() + "; echo mine > " + (own / "mine.txt").string() +
                             "; echo loose > /dev/shm/anvil-test-loose-" + std::to_string(::getpid());
  ProcessResult r = Run({"/bin/sh", "-c", script}, policy);
  if (!(r.sandbox_layers & kSandboxUserNs)) GTEST_SKIP() << "no user namespaces here";
  EXPECT_TRUE(r.sandbox_layers & kSandboxReadOnly) << r.Describe();
  EXPECT_TRUE(r.Succeeded()) << r.Describe() << r.err;
  EXPECT_EQ(r.out.rfind("inputs\n", 0), 0u) << r.out;                          // Its inputs, read where they are...
  EXPECT_NE(r.err.find("Read-only file system"), std::string::npos) << r.err;  // ...and not written.
  EXPECT_EQ(ReadFile(other / "inputs" / "in0.bin").value(), "inputs");
  EXPECT_EQ(r.out.find("out0.bin"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find(other.filename().string() + "\n"), std::string::npos) << r.out;  // Only its own paths.
  EXPECT_EQ(ReadFile(other / "out0.bin").value(), "their outputs");
  auto mine = ReadFile(own / "mine.txt");
  EXPECT_TRUE(mine.ok() && mine.value() == "mine\n") << mine.message();  // Its own scratch works, at the same path.
  const fs::path loose = "/dev/shm/anvil-test-loose-" + std::to_string(::getpid());
  EXPECT_FALSE(fs::exists(loose));  // Gone with the child's namespace.
  // Without the layers the other job's file is overwritten: the test can fail.
  policy.read_only_mounts = false;
  policy.own_root = false;
  EXPECT_TRUE(Run({"/bin/sh", "-c", script}, policy).Succeeded());
  EXPECT_EQ(ReadFile(other / "out0.bin").value(), "planted\n");
  (void)RemoveTree(other);
  (void)RemoveTree(own);
  (void)fs::remove(loose);
}

// Where Landlock is not in force (a GPU driver that does not tolerate it), the
// child's root holds the listed paths only: the reference outputs, the home
// directory, the cache and other jobs' folders are not there to read.
TEST_F(SandboxTest, WithoutLandlockTheChildsRootHoldsOnlyTheListedPaths) {
  SandboxPolicy policy = Policy();
  policy.confine_files = false;
  // Shell builtins only: a candidate may not start processes.
  const std::string script = "pwd; read -r x < allowed/input.txt; echo \"$x\"; read -r y < " + secret_.string() +
                             "; echo \"$y\"; echo " + dir_.string() +
                             "/*; echo mine > scratch/out.txt; echo x > allowed/new.txt; echo x > /planted; echo /*";
  auto run = [&](const SandboxPolicy& p) {
    auto box = Sandbox::Prepare(p);
    EXPECT_TRUE(box.ok()) << box.message();
    ProcessSpec spec;
    spec.argv = {"/bin/sh", "-c", script};
    spec.working_dir = dir_.string();
    spec.sandbox = box.value();
    spec.deadline = std::chrono::seconds(20);
    auto r = RunProcess(spec);
    EXPECT_TRUE(r.ok()) << r.message();
    return r.ok() ? r.value() : ProcessResult{};
  };
  ProcessResult r = run(policy);
  if (!(r.sandbox_layers & kSandboxUserNs)) GTEST_SKIP() << "no user namespaces here";
  ASSERT_TRUE(r.sandbox_layers & kSandboxOwnRoot) << r.Describe() << r.err;
  EXPECT_EQ(r.out.rfind(dir_.string() + "\ninputs\n", 0), 0u) << r.out;        // Its working folder, its inputs...
  EXPECT_EQ(r.out.find("the reference outputs"), std::string::npos) << r.out;  // ...not the reference outputs,
  EXPECT_NE(r.err.find("No such file"), std::string::npos) << r.err;           // which are not there at all,
  EXPECT_EQ(r.out.find("secret"), std::string::npos) << r.out;                 // nor their folder.
  EXPECT_EQ(ReadFile(dir_ / "scratch/out.txt").value(), "mine\n");             // The scratch is writable...
  EXPECT_FALSE(fs::exists(dir_ / "allowed/new.txt"));                          // ...nothing else is.
  EXPECT_NE(r.err.find("Read-only file system"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("/home"), std::string::npos) << r.out;  // `/*`: the listed folders' tops only.
  EXPECT_NE(r.out.find("/usr"), std::string::npos) << r.out;
  EXPECT_TRUE(r.Succeeded()) << r.Describe() << r.err;
  // Without the layer the reference outputs are there to read: the test can fail.
  policy.own_root = false;
  r = run(policy);
  EXPECT_NE(r.out.find("the reference outputs"), std::string::npos) << r.out << r.err;
  EXPECT_FALSE(r.sandbox_layers & kSandboxOwnRoot);
}

// A run's folder in memory (/dev/shm) is the scratch, with a file in it the
// candidate may only read (as anvil's builds.json): the root layer holds them
// too, and still nothing but the listed paths. (The read-only file, carried
// into the new root by the scratch's recursive bind, once failed the layer.)
TEST_F(SandboxTest, WithoutLandlockTheChildsRootHoldsAScratchInDevShm) {
  const fs::path own = MakeScratchDir("anvil-test-root-", 1).value();
  if (!Under(own, "/dev/shm")) {
    (void)RemoveTree(own);
    GTEST_SKIP() << "no /dev/shm scratch on this machine";
  }
  ASSERT_TRUE(WriteFileAtomic(own / "builds.json", "{}").ok());
  SandboxPolicy policy = Policy();
  policy.confine_files = false;
  policy.read_write = {own};
  policy.read_only.push_back(own / "builds.json");
  auto box = Sandbox::Prepare(policy);
  ASSERT_TRUE(box.ok()) << box.message();
  ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c", "echo mine > out.txt; read -r y < " + secret_.string() + "; echo \"$y\""};
  spec.working_dir = own.string();
  spec.sandbox = box.value();
  spec.deadline = std::chrono::seconds(20);
  auto r = RunProcess(spec);
  ASSERT_TRUE(r.ok()) << r.message();
  if (!(r.value().sandbox_layers & kSandboxUserNs)) GTEST_SKIP() << "no user namespaces here";
  EXPECT_TRUE(r.value().sandbox_layers & kSandboxOwnRoot) << r.value().Describe() << r.value().err;
  EXPECT_EQ(r.value().out.find("the reference outputs"), std::string::npos) << r.value().out;
  EXPECT_EQ(ReadFile(own / "out.txt").value(), "mine\n");
  EXPECT_EQ(ReadFile(own / "builds.json").value(), "{}");
  (void)RemoveTree(own);
}

// The CUDA driver names its threads through /proc/<pid>/task/<tid>/comm (cuInit fails with error 304 when it
// cannot), so the candidate policy makes /proc writable; /proc's kernel settings stay read-only in the child's mount
// namespace, with or without Landlock: when the tests run as root (as on the GPU machine), a child mapped to the
// host's root could otherwise change them. The sysctl is only opened for writing, never written: a test must not
// change the host (an earlier version wrote the value back in two pieces and left swappiness at 6).
TEST_F(SandboxTest, ThreadNamesAreWritableSysctlsAreNot) {
  const std::string script =
      "echo probe > /proc/self/comm && echo comm-written; { :; } 3>> /proc/sys/vm/swappiness && "
      "echo sysctl-opened; echo end";
  for (const bool landlock : {true, false}) {
    SandboxPolicy policy = Policy();
    policy.read_write.push_back("/proc");
    policy.confine_files = landlock;
    ProcessResult r = Run({"/bin/sh", "-c", script}, policy);
    if (!(r.sandbox_layers & kSandboxUserNs)) GTEST_SKIP() << "no user namespaces here";
    EXPECT_TRUE(r.sandbox_layers & kSandboxReadOnly) << r.Describe();
    EXPECT_NE(r.out.find("comm-written"), std::string::npos) << landlock << r.out << r.err;
    EXPECT_EQ(r.out.find("sysctl-opened"), std::string::npos) << landlock << r.out;
    EXPECT_NE(r.out.find("end"), std::string::npos) << landlock << r.out << r.err;
    if (::geteuid() == 0) EXPECT_NE(r.err.find("Read-only file system"), std::string::npos) << landlock << r.err;
  }
}

// Where Landlock is not in force, a child whose user maps to the host's root (anvil run as root, as on the GPU
// machine) passes the file permission checks of root-owned files: the `root` layer keeps sysfs read-only and /dev
// down to the listed device files. Files are only opened for writing, never written.
TEST_F(SandboxTest, WithoutLandlockTheRootLayerKeepsSysfsAndHostDevicesOutOfReach) {
  SandboxPolicy policy = Policy();
  policy.read_only = {"/usr", "/bin", "/lib", "/lib64", "/etc", "/proc", "/sys", dir_ / "allowed"};  // No /dev.
  policy.read_write = {dir_ / "scratch", "/dev/null"};
  policy.confine_files = false;
  const std::string script =
      "{ :; } 3>> /sys/kernel/profiling && echo sysfs-opened; { :; } 3>> /dev/kmsg && echo kmsg-opened; "
      "echo x > /dev/null && echo null-written; echo end";
  ProcessResult r = Run({"/bin/sh", "-c", script}, policy);
  if (!(r.sandbox_layers & kSandboxUserNs)) GTEST_SKIP() << "no user namespaces here";
  ASSERT_TRUE(r.sandbox_layers & kSandboxOwnRoot) << r.Describe() << r.err;
  EXPECT_EQ(r.out.find("sysfs-opened"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("kmsg-opened"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("null-written\nend"), std::string::npos) << r.out << r.err;
  // rofs alone keeps sysfs read-only too, but leaves /dev as it is: root reaches /dev/kmsg (the test can fail)...
  policy.own_root = false;
  r = Run({"/bin/sh", "-c", script}, policy);
  EXPECT_EQ(r.out.find("sysfs-opened"), std::string::npos) << r.out;
  if (::geteuid() == 0) EXPECT_NE(r.out.find("kmsg-opened"), std::string::npos) << r.out << r.err;
  // ...and without either layer root reaches sysfs as well.
  policy.read_only_mounts = false;
  r = Run({"/bin/sh", "-c", script}, policy);
  if (::geteuid() == 0 && fs::exists("/sys/kernel/profiling")) {
    EXPECT_NE(r.out.find("sysfs-opened"), std::string::npos) << r.out << r.err;
  }
}

TEST_F(SandboxTest, NoNetworkInterfacesWhenIsolated) {
  ProcessResult r = Run({"/bin/cat", "/proc/net/dev"}, Policy());
  ASSERT_TRUE(r.Succeeded()) << r.err;
  if (!(r.sandbox_layers & kSandboxNetNs)) GTEST_SKIP() << "no network namespace here";
  EXPECT_EQ(r.out.find("eth"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace anvil
