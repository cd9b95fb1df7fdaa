#include "integrity/compiler_sandbox.h"

#include <gtest/gtest.h>

#include <string>

#include "compile/compiler_run.h"
#include "core/temp_dir_fixture.h"

namespace anvil {
namespace {

namespace fs = std::filesystem;

class CompilerSandboxTest : public TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    build_ = dir_ / "build";
    fs::create_directories(build_);
    secret_ = Write("tasks/relu/trial_0/expected/out0.bin", "the reference outputs");
    auto box = CompilerSandbox::Make({{}, {build_}});
    ASSERT_TRUE(box.ok()) << box.message();
    box_ = box.value();
    if (box_.sandbox() == nullptr || box_.sandbox()->landlock_abi() == 0) GTEST_SKIP() << "no Landlock here";
  }
  CompilerRun Shell(const std::string& script) {
    auto run = RunCompiler({"/bin/sh", "-c", script}, std::chrono::seconds(30), box_);
    EXPECT_TRUE(run.ok()) << run.message();
    return run.ok() ? run.value() : CompilerRun{};
  }
  fs::path build_, secret_;
  CompilerSandbox box_;
};

// A compiler runs its own programs (a pipeline forks) and writes its build folder, where its temporary files go
// too; nothing else of the machine's files is its to read or write (catalog E: `-wrapper sh,-c,...`, `-MF` and
// the assembler's `.incbin` reach the compiler).
TEST_F(CompilerSandboxTest, ACompilerWritesItsBuildFolderOnlyAndReadsNoCache) {
  CompilerRun ok = Shell("echo built > " + (build_ / "main.o").string() + " && echo \"$TMPDIR\" | cat");
  EXPECT_TRUE(ok.ok) << ok.log;
  EXPECT_EQ(ok.log, build_.string() + "\n");
  EXPECT_TRUE(fs::exists(build_ / "main.o"));

  CompilerRun read = Shell("cat " + secret_.string());
  EXPECT_FALSE(read.ok);
  EXPECT_EQ(read.log.find("the reference outputs"), std::string::npos) << read.log;

  CompilerRun write = Shell("echo planted > " + (dir_ / "tasks" / "planted").string());
  EXPECT_FALSE(write.ok);
  EXPECT_FALSE(fs::exists(dir_ / "tasks" / "planted"));
}

TEST_F(CompilerSandboxTest, AnAssemblerCannotEmbedAFileOutsideTheBuild) {
  auto source = [&](const fs::path& embedded) {
    Write("build/k.cpp", "asm(\".section .rodata\\n.incbin \\\"" + embedded.string() + "\\\"\\n.previous\");\n");
    return RunCompiler({"g++", "-c", (build_ / "k.cpp").string(), "-o", (build_ / "k.o").string()},
                       std::chrono::seconds(60), box_);
  };
  auto outside = source(secret_);
  ASSERT_TRUE(outside.ok()) << outside.message();
  EXPECT_FALSE(outside.value().ok) << outside.value().log;
  fs::copy_file(secret_, build_ / "copy.bin");
  auto inside = source(build_ / "copy.bin");  // The same source, the file inside: it builds.
  ASSERT_TRUE(inside.ok()) << inside.message();
  EXPECT_TRUE(inside.value().ok) << inside.value().log;
}

}  // namespace
}  // namespace anvil
