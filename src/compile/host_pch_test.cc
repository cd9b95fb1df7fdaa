#include "compile/host_pch.h"

#include <gtest/gtest.h>

namespace anvil {
namespace {

constexpr char kCudafeOutput[] =
    "# 1 \"/b1/cuda.cu\"\n"
    "#pragma GCC diagnostic ignored \"-Wattributes\"\n"
    "# 1 \"/usr/include/x.h\" 1 3\n"
    "int x;\n"
    "# 2 \"/b1/cuda.cu\" 2\n"
    "# 1 \"/usr/include/y.h\" 1 3\n"
    "int y;\n"
    "# 4 \"/b1/cuda.cu\" 2\n"
    "void f() {}\n";

TEST(HostPchTest, SplitsWhereTheSourcesOwnLinesStart) {
  auto split = SplitCudafeOutput(kCudafeOutput, 4);
  ASSERT_TRUE(split.has_value());
  EXPECT_EQ(split->main_file, "/b1/cuda.cu");
  EXPECT_EQ(std::string(split->rest), "# 4 \"/b1/cuda.cu\" 2\nvoid f() {}\n");
  EXPECT_EQ(std::string(split->prefix) + std::string(split->rest), kCudafeOutput);
  // A return to the main file inside the preamble is not the split.
  EXPECT_EQ(SplitCudafeOutput(kCudafeOutput, 2)->rest.substr(0, 18), "# 2 \"/b1/cuda.cu\" ");
  EXPECT_FALSE(SplitCudafeOutput(kCudafeOutput, 5).has_value());             // The source never gets there.
  EXPECT_FALSE(SplitCudafeOutput("int x;\n# 4 \"a.cu\"\n", 4).has_value());  // No marker first: not cudafe++'s.
  EXPECT_FALSE(SplitCudafeOutput("", 4).has_value());
}

TEST(HostPchTest, TheKeyIgnoresWhereAndForWhichExtensionItWasBuilt) {
  const std::string final1 =
      "gcc -c -x c++ -DTORCH_EXTENSION_NAME=first -fPIC \"/b1/tmp/cuda.cudafe1.cpp\" -o \"/b1/cuda.o\"";
  const std::string final2 =
      "gcc -c -x c++ -DTORCH_EXTENSION_NAME=second -fPIC \"/b2/tmp/cuda.cudafe1.cpp\" -o \"/b2/cuda.o\"";
  std::string other = kCudafeOutput;
  for (std::size_t at; (at = other.find("/b1/")) != std::string::npos;) other.replace(at, 4, "/b2/");
  auto one = SplitCudafeOutput(kCudafeOutput, 4);
  auto two = SplitCudafeOutput(other, 4);
  ASSERT_TRUE(one && two);
  const std::string key = HostPchKey(final1, *one, "gcc 12");
  EXPECT_EQ(key, HostPchKey(final2, *two, "gcc 12"));
  // Anything that can change the object changes it: the flags, the compiler, the headers' text.
  EXPECT_NE(key, HostPchKey("gcc -O3 -c -x c++ -fPIC \"/b1/tmp/cuda.cudafe1.cpp\" -o \"/b1/cuda.o\"", *one, "gcc 12"));
  EXPECT_NE(key, HostPchKey(final1, *one, "gcc 13"));
  std::string more = kCudafeOutput;
  more.insert(more.find("int y;"), "int z;\n");
  EXPECT_NE(key, HostPchKey(final1, *SplitCudafeOutput(more, 4), "gcc 12"));
}

}  // namespace
}  // namespace anvil
