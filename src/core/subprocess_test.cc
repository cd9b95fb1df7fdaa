#include "core/subprocess.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <thread>

#include "core/temp_dir_fixture.h"

namespace anvil {
namespace {

ProcessSpec Shell(const std::string& script) {
  ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c", script};
  return spec;
}

bool Alive(pid_t pid) { return kill(pid, 0) == 0; }

TEST(SubprocessTest, CapturesOutputAndExitCode) {
  auto r = RunProcess(Shell("echo out; echo err >&2; exit 7"));
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r.value().exit_code, 7);
  EXPECT_EQ(r.value().term_signal, 0);
  EXPECT_FALSE(r.value().timed_out);
  EXPECT_EQ(r.value().out, "out\n");
  EXPECT_EQ(r.value().err, "err\n");
  EXPECT_EQ(r.value().Describe(), "exit 7");
}

TEST(SubprocessTest, StdinIsDevNull) {
  auto r = RunProcess(Shell("cat; echo done"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value().out, "done\n");
}

TEST(SubprocessTest, PassesChosenDescriptorsAsThreeFourAndNoOthers) {
  int a[2], b[2], c[2];
  ASSERT_EQ(pipe2(a, O_CLOEXEC), 0);
  ASSERT_EQ(pipe2(b, O_CLOEXEC), 0);
  ASSERT_EQ(pipe2(c, O_CLOEXEC), 0);  // Not passed: must not reach the child.
  ProcessSpec spec = Shell("ls /proc/self/fd | sort -n | tr '\\n' ' '; read line <&3; echo \"got $line\" >&4");
  spec.pass_fds = {a[0], b[1]};
  ASSERT_EQ(write(a[1], "hello\n", 6), 6);
  auto r = RunProcess(spec);
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r.value().exit_code, 0) << r.value().err;
  char buf[64] = {};
  close(b[1]);
  ASSERT_GT(read(b[0], buf, sizeof buf - 1), 0);
  EXPECT_STREQ(buf, "got hello\n");
  // 0-2, the two passed ones and the one ls opens to list the folder.
  EXPECT_EQ(r.value().out, "0 1 2 3 4 5 ");
  for (int fd : {a[0], a[1], b[0], c[0], c[1]}) close(fd);
}

TEST(SubprocessTest, ReportsCrashSignal) {
  auto r = RunProcess(Shell("kill -SEGV $$"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value().term_signal, SIGSEGV);
  EXPECT_FALSE(r.value().Succeeded());
  EXPECT_NE(r.value().Describe().find("signal 11"), std::string::npos);
}

// Compilers run under a file size cap (compile/compiler_run.h): a write past
// it ends the writer (SIGXFSZ) and the file stays at the cap.
class SubprocessFileTest : public TempDirTest {};

TEST_F(SubprocessFileTest, AFileSizeCapStopsAWriterAtTheCap) {
  const std::filesystem::path file = dir_ / "big";
  ProcessSpec spec;
  spec.argv = {"dd", "if=/dev/zero", "of=" + file.string(), "bs=1M", "count=4"};
  spec.max_file_bytes = 1 << 20;
  auto r = RunProcess(spec);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value().term_signal, SIGXFSZ) << r.value().Describe();
  EXPECT_EQ(std::filesystem::file_size(file), 1u << 20);
  // Without a cap, the same write completes.
  spec.max_file_bytes = 0;
  EXPECT_TRUE(RunProcess(spec).value().Succeeded());
  EXPECT_EQ(std::filesystem::file_size(file), 4u << 20);
}

TEST(SubprocessTest, DeadlineKillsWholeGroupIncludingGrandchildren) {
  char tmpl[] = "/tmp/anvil-subproc-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  std::string pidfile = std::string(tmpl) + "/pid";
  // The grandchild ignores SIGTERM and records its pid; only SIGKILL to the
  // group ends it.
  ProcessSpec spec = Shell("(trap '' TERM; echo $$ > " + pidfile + "; exec sleep 60) & sleep 60");
  spec.deadline = std::chrono::milliseconds(500);
  spec.kill_grace = std::chrono::milliseconds(200);
  auto start = std::chrono::steady_clock::now();
  auto r = RunProcess(spec);
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r.value().timed_out);
  EXPECT_LT(took, 2.5);
  std::ifstream in(pidfile);
  pid_t grandchild = 0;
  in >> grandchild;
  ASSERT_GT(grandchild, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(Alive(grandchild)) << "grandchild " << grandchild << " survived";
  std::system((std::string("rm -rf ") + tmpl).c_str());
}

TEST(SubprocessTest, DeadlineExtensionRaisedWhileRunningGrantsMoreTime) {
  // A 0.4 s deadline on a 1 s child: it survives only because another thread
  // moves the deadline 2 s later while it runs.
  ProcessSpec spec = Shell("sleep 1; echo finished");
  spec.deadline = std::chrono::milliseconds(400);
  auto extension = std::make_shared<std::atomic<int64_t>>(0);
  spec.deadline_extension_ms = extension;
  std::thread raise([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    extension->store(2000);
  });
  auto r = RunProcess(spec);
  raise.join();
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r.value().timed_out);
  EXPECT_EQ(r.value().out, "finished\n");

  // Without the raise the same deadline stops it.
  spec.deadline_extension_ms = std::make_shared<std::atomic<int64_t>>(0);
  auto stopped = RunProcess(spec);
  ASSERT_TRUE(stopped.ok());
  EXPECT_TRUE(stopped.value().timed_out);
}

TEST(SubprocessTest, WithAReadyPipeTheDeadlineCountsFromReadiness) {
  // A slow start (0.8 s) and then 0.5 s of work under a 1 s deadline: 1.3 s
  // from the start, but 0.5 s from when it said it was ready. The pipe's
  // flag and descriptor follow the script: $0 is "--ready-fd", $1 the fd.
  ProcessSpec spec = Shell("sleep 0.8; printf r >&$1; sleep 0.5; echo \"finished $0\"");
  spec.deadline = std::chrono::milliseconds(1000);
  {
    ReadyPipe ready;
    ASSERT_TRUE(ready.Attach(spec, "--ready-fd").ok());
    auto r = RunProcess(spec);
    ASSERT_TRUE(r.ok());
    EXPECT_FALSE(r.value().timed_out) << r.value().err;
    EXPECT_FALSE(r.value().not_ready);
    EXPECT_EQ(r.value().out, "finished --ready-fd\n");
  }

  // The same child without readiness counted runs out of time.
  spec.ready_fd = -1;
  auto counted = RunProcess(spec);
  ASSERT_TRUE(counted.ok());
  EXPECT_TRUE(counted.value().timed_out);

  // Work after readiness that takes too long is a timeout.
  spec = Shell("printf r >&$1; sleep 30");
  spec.deadline = std::chrono::milliseconds(300);
  ReadyPipe ready;
  ASSERT_TRUE(ready.Attach(spec, "--ready-fd").ok());
  auto slow = RunProcess(spec);
  ASSERT_TRUE(slow.ok());
  EXPECT_TRUE(slow.value().timed_out);
  EXPECT_FALSE(slow.value().not_ready);
}

TEST(SubprocessTest, AChildThatNeverGetsReadyIsStoppedAsNotReady) {
  ProcessSpec spec = Shell("sleep 30");
  spec.deadline = std::chrono::milliseconds(60000);
  spec.ready_allowance = std::chrono::milliseconds(300);
  ReadyPipe ready;
  ASSERT_TRUE(ready.Attach(spec, "--ready-fd").ok());
  auto start = std::chrono::steady_clock::now();
  auto r = RunProcess(spec);
  ASSERT_TRUE(r.ok());
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 5.0);
  EXPECT_TRUE(r.value().not_ready);
  EXPECT_FALSE(r.value().timed_out);
}

TEST(SubprocessTest, AHandshakeHoldsTheChildAndItsDeadlineWhileTheParentWaits) {
  // The child gets there at once; the parent takes 1.5 s to let it go on,
  // under a 1 s deadline that stops meanwhile. $1 is the socket's fd.
  ProcessSpec spec = Shell("printf r >&$1; word=$(head -c1 <&$1); sleep 0.3; echo \"went on: $word\"");
  spec.deadline = std::chrono::milliseconds(1000);
  std::atomic<int> readies{0};
  Handshake handshake([&] {
    ++readies;
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  });
  ASSERT_TRUE(handshake.Attach(spec, "--handshake-fd").ok());
  auto r = RunProcess(spec);
  EXPECT_TRUE(handshake.Finish());
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r.value().timed_out) << r.value().err;
  EXPECT_EQ(r.value().out, "went on: g\n");
  EXPECT_EQ(readies.load(), 1);
  EXPECT_GT(r.value().wall_seconds, 1.5);

  // After the parent's word the deadline counts again, in full.
  spec = Shell("printf r >&$1; head -c1 <&$1 >/dev/null; sleep 30");
  spec.deadline = std::chrono::milliseconds(500);
  Handshake late([] {});
  ASSERT_TRUE(late.Attach(spec, "--handshake-fd").ok());
  auto slow = RunProcess(spec);
  ASSERT_TRUE(slow.ok());
  EXPECT_TRUE(slow.value().timed_out);
  EXPECT_LT(slow.value().wall_seconds, 5.0);
}

TEST(SubprocessTest, AChildThatNeverGetsToTheHandshakeRunsNoCallback) {
  ProcessSpec spec = Shell("exit 3");
  bool ran = false;
  Handshake handshake([&] { ran = true; });
  ASSERT_TRUE(handshake.Attach(spec, "--handshake-fd").ok());
  auto r = RunProcess(spec);
  EXPECT_FALSE(handshake.Finish());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value().exit_code, 3);
  EXPECT_FALSE(ran);
  // A spec whose deadline is extended elsewhere cannot take one.
  Handshake second([] {});
  EXPECT_FALSE(second.Attach(spec, "--handshake-fd").ok());
}

TEST(SubprocessTest, NiceRaisesTheChildsNiceness) {
  ProcessSpec spec;
  spec.argv = {"nice"};  // Prints its own niceness.
  auto base = RunProcess(spec);
  ASSERT_TRUE(base.ok() && base.value().Succeeded());
  const int before = std::atoi(base.value().out.c_str());
  spec.nice = 5;
  auto niced = RunProcess(spec);
  ASSERT_TRUE(niced.ok() && niced.value().Succeeded());
  EXPECT_EQ(std::atoi(niced.value().out.c_str()), std::min(before + 5, 19));
}

TEST(SubprocessTest, BackgroundChildHoldingPipeDoesNotBlock) {
  ProcessSpec spec = Shell("sleep 30 & echo started");
  auto start = std::chrono::steady_clock::now();
  auto r = RunProcess(spec);
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value().exit_code, 0);
  EXPECT_EQ(r.value().out, "started\n");
  EXPECT_LT(took, 2.0);
}

TEST(SubprocessTest, OutputIsCappedKeepingHeadAndTail) {
  ProcessSpec spec = Shell("echo HEAD; head -c 200000 /dev/zero | tr '\\0' x; echo; echo TAIL");
  spec.output_cap = 1000;
  auto r = RunProcess(spec);
  ASSERT_TRUE(r.ok());
  EXPECT_LT(r.value().out.size(), 1100u);
  EXPECT_EQ(r.value().out.rfind("HEAD", 0), 0u);
  EXPECT_NE(r.value().out.find("TAIL"), std::string::npos);
  EXPECT_NE(r.value().out.find("bytes dropped"), std::string::npos);
}

TEST(SubprocessTest, MissingProgramIsAnError) {
  ProcessSpec spec;
  spec.argv = {"/nonexistent/anvil-no-such-program"};
  auto r = RunProcess(spec);
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.message().find("cannot start"), std::string::npos);
}

TEST(SubprocessTest, EnvironmentAndWorkingDir) {
  ProcessSpec spec = Shell("echo $ANVIL_TEST_VAR; pwd");
  spec.env = {{"ANVIL_TEST_VAR", "hello"}};
  spec.working_dir = "/tmp";
  auto r = RunProcess(spec);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value().out, "hello\n/tmp\n");
}

}  // namespace
}  // namespace anvil
