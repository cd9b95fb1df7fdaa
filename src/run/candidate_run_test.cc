#include "run/candidate_run.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>

namespace anvil {
namespace {

TEST(KernelTraceLibraryTest, OnCudaOnlyAndSaysWhyNot) {
  std::string why;
  auto cpu = Backend::FromName("cpu");
  ASSERT_TRUE(cpu.ok());
  EXPECT_TRUE(KernelTraceLibrary(cpu.value(), &why).empty());
  EXPECT_NE(why.find("CUDA only"), std::string::npos) << why;

  auto cuda = Backend::FromName("cuda");
  ASSERT_TRUE(cuda.ok());
  ::setenv("ANVIL_KERNEL_TRACE", "0", 1);
  EXPECT_TRUE(KernelTraceLibrary(cuda.value(), &why).empty());
  EXPECT_NE(why.find("ANVIL_KERNEL_TRACE=0"), std::string::npos) << why;
  ::unsetenv("ANVIL_KERNEL_TRACE");

  ::setenv("ANVIL_TRACE_LIB", "/nonexistent/libanvil_trace.so", 1);
  EXPECT_TRUE(KernelTraceLibrary(cuda.value(), &why).empty());
  EXPECT_NE(why.find("/nonexistent/libanvil_trace.so is missing"), std::string::npos) << why;
  // The library built next to this test binary (as next to anvil) is found.
  const std::filesystem::path beside =
      std::filesystem::read_symlink("/proc/self/exe").parent_path() / "libanvil_trace.so";
  ::unsetenv("ANVIL_TRACE_LIB");
  if (std::filesystem::exists(beside)) EXPECT_EQ(KernelTraceLibrary(cuda.value(), &why), beside);
}

}  // namespace
}  // namespace anvil
