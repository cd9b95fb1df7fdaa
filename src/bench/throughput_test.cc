#include "bench/throughput.h"

#include <gtest/gtest.h>

namespace anvil {
namespace {

TEST(RenameExtensionsTest, SuffixesTheNameOfEveryLoadInlineCall) {
  const std::string text =
      "relu = load_inline(\n    name=\"relu_ext\", cpp_sources=cpp, cuda_sources=cu,\n"
      "    functions=['relu'], verbose=False)\n"
      "gelu = load_inline(cpp_sources=[src], name = 'gelu_ext', extra_cflags=['-O3'])\n";
  int renamed = 0;
  const std::string out = RenameExtensions(text, "_b7", &renamed);
  EXPECT_EQ(renamed, 2);
  EXPECT_NE(out.find("name=\"relu_ext_b7\""), std::string::npos) << out;
  EXPECT_NE(out.find("name = 'gelu_ext_b7'"), std::string::npos) << out;
  EXPECT_NE(out.find("functions=['relu'], verbose=False)\n"), std::string::npos) << out;
}

TEST(RenameExtensionsTest, LeavesOtherNamesAndComputedNamesAlone) {
  // A `name=` outside the call, one inside a nested call or a string, and a
  // computed name are not the extension's literal name.
  const std::string text =
      "self.register_buffer(name='w', tensor=t)\n"
      "mod = load_inline(name=EXT_NAME, cpp_sources=dict(name='x')['name'], functions=[\"f(name='y')\"])\n";
  int renamed = 0;
  EXPECT_EQ(RenameExtensions(text, "_b1", &renamed), text);
  EXPECT_EQ(renamed, 0);
}

}  // namespace
}  // namespace anvil
