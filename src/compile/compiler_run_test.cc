#include "compile/compiler_run.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>

namespace anvil {
namespace {

// Compilers are background work: niced, so that the runs beside them (and
// their timed calls) get the CPU first.
TEST(CompilerRunTest, CompilersRunNiced) {
  ProcessSpec plain;
  plain.argv = {"nice"};  // Prints its own niceness.
  auto base = RunProcess(plain);
  ASSERT_TRUE(base.ok() && base.value().Succeeded());
  auto run = RunCompiler({"nice"}, std::chrono::seconds(30), CompilerSandbox{});
  ASSERT_TRUE(run.ok()) << run.message();
  ASSERT_TRUE(run.value().ok) << run.value().log;
  EXPECT_EQ(std::atoi(run.value().log.c_str()), std::min(std::atoi(base.value().out.c_str()) + kCompilerNice, 19));
}

}  // namespace
}  // namespace anvil
