#include "core/zygote.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include "core/environment.h"
#include "core/python.h"
#include "core/sandbox.h"
#include "core/subprocess.h"
#include "core/temp_dir_fixture.h"

namespace anvil {
namespace {

namespace fs = std::filesystem;
using ZygoteTest = TempDirTest;

// A Python worker forked by the real zygote: argv, working folder, passed
// descriptors and the sandbox arrive as with exec, and it is fast.
TEST_F(ZygoteTest, WorkersForkedByTheZygoteGetTheirArgumentsFoldersDescriptorsAndSandbox) {
  Zygote* zygote = Zygote::Shared();
  ASSERT_NE(zygote, nullptr) << "the zygote did not start (is libanvil_sandbox.so next to the test binary?)";

  // The usage text of a worker, as `python -m anvil_py.task_worker --help` prints it.
  ProcessSpec help = PythonWorkerSpec("task_worker", {"--help"});
  const auto t0 = std::chrono::steady_clock::now();
  auto r = RunProcess(help);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r.value().exit_code, 0) << r.value().err;
  EXPECT_NE(r.value().out.find("usage: anvil_py.task_worker"), std::string::npos) << r.value().out;
  EXPECT_LT(seconds, 1.5);  // Importing torch alone takes longer: it was forked.

  // A descriptor passed as 3, the working folder, an exit code, inside a sandbox.
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  Write("work/marker.txt", "x");
  SandboxPolicy policy;
  policy.read_only = {"/usr", "/lib", "/lib64", "/etc", "/proc", "/dev", PythonPackageDir()};
  policy.read_only.push_back(fs::path(PythonExecutable()).parent_path().parent_path());
  policy.read_write = {dir_ / "work"};
  auto box = Sandbox::Prepare(policy);
  ASSERT_TRUE(box.ok()) << box.message();
  ProcessSpec probe = PythonWorkerSpec("zygote_probe", {"7"});
  probe.working_dir = (dir_ / "work").string();
  probe.env.emplace_back("TMPDIR", (dir_ / "work").string());  // Not the zygote's own (it read /tmp once).
  probe.pass_fds = {pipe_fds[1]};
  probe.sandbox = box.value();
  auto p = RunProcess(probe);
  close(pipe_fds[1]);
  ASSERT_TRUE(p.ok()) << p.message();
  EXPECT_EQ(p.value().exit_code, 7) << p.value().err;
  EXPECT_NE(p.value().out.find("cwd has marker.txt"), std::string::npos) << p.value().out << p.value().err;
  EXPECT_NE(p.value().out.find("tempdir " + (dir_ / "work").string() + "\n"), std::string::npos) << p.value().out;
  char buf[16] = {};
  EXPECT_EQ(read(pipe_fds[0], buf, sizeof buf), 5);
  EXPECT_EQ(std::string(buf), "fd-3!");
  close(pipe_fds[0]);
  EXPECT_NE(p.value().sandbox_layers & kSandboxSeccomp, 0u);
  EXPECT_NE(p.value().sandbox_layers & kSandboxRlimits, 0u);
}

// Nothing the zygote imports may initialize CUDA: its children would fail at
// their first CUDA call (torch.utils.cpp_extension's import asks
// torch.cuda.is_available(), which did, on the H200).
TEST_F(ZygoteTest, ItsChildrenMayStillUseCuda) {
  ASSERT_NE(Zygote::Shared(), nullptr);
  auto r = RunProcess(PythonWorkerSpec("zygote_probe", {"cuda-fork"}));
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r.value().exit_code, 0) << r.value().err;
  EXPECT_NE(r.value().out.find("clean fork"), std::string::npos) << r.value().out << r.value().err;
}

TEST_F(ZygoteTest, ASandboxedChildCannotSignalTheZygote) {
  Zygote* zygote = Zygote::Shared();
  ASSERT_NE(zygote, nullptr);
  SandboxPolicy policy;
  policy.confine_files = false;
  auto box = Sandbox::Prepare(policy);
  ASSERT_TRUE(box.ok()) << box.message();
  ProcessSpec spec = PythonWorkerSpec("zygote_probe", {"kill-parent"});
  spec.sandbox = box.value();
  auto r = RunProcess(spec);
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r.value().term_signal, SIGSYS) << r.value().err;
  EXPECT_EQ(kill(zygote->pid(), 0), 0);  // Still there,
  EXPECT_EQ(Zygote::Shared(), zygote);   // and still used.
}

TEST_F(ZygoteTest, ADeadZygoteIsReplacedByExecAndItsChildrenDieWithIt) {
  Zygote* zygote = Zygote::Shared();
  ASSERT_NE(zygote, nullptr);
  ProcessSpec sleeper = PythonWorkerSpec("zygote_probe", {"sleep"});
  sleeper.deadline = std::chrono::milliseconds(20000);
  // Kill the zygote while its child sleeps: the child dies with it, and is
  // reported killed instead of hanging.
  std::thread killer([zygote] {
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    kill(zygote->pid(), SIGKILL);
  });
  auto r = RunProcess(sleeper);
  killer.join();
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r.value().term_signal, SIGKILL);
  EXPECT_FALSE(r.value().timed_out);
  EXPECT_LT(r.value().wall_seconds, 10);
  // The next worker is exec'd.
  EXPECT_EQ(Zygote::Shared(), nullptr);
  auto next = RunProcess(PythonWorkerSpec("task_worker", {"--help"}));
  ASSERT_TRUE(next.ok()) << next.message();
  EXPECT_EQ(next.value().exit_code, 0) << next.value().err;
}

}  // namespace
}  // namespace anvil
