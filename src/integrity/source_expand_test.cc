#include "integrity/source_expand.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>

#include "integrity/source_scan.h"

namespace anvil {
namespace {

bool Has(const std::vector<RuleHit>& hits, const std::string& rule, int line) {
  return std::any_of(hits.begin(), hits.end(), [&](const RuleHit& h) { return h.rule == rule && h.line == line; });
}

TEST(SourceExpandTest, ExpandsTheCandidatesOwnMacrosLineForLine) {
  auto e = ExpandOwnMacros(
      "#include <cuda_runtime.h>\n"
      "#define PASTE(a, b) a##b\n"
      "int x = PASTE(foo, bar);\n"
      "#if 0\n"
      "int dead;\n"
      "#endif\n"
      "int y = __CUDACC__;\n");
  ASSERT_TRUE(e.ok()) << e.message();
  std::vector<std::string> lines;
  std::string line;
  std::istringstream in(e.value());
  while (std::getline(in, line)) lines.push_back(line);
  ASSERT_EQ(lines.size(), 7u);
  EXPECT_EQ(lines[2], "int x = foobar;");
  EXPECT_EQ(lines[4], "");  // Dead branch.
  EXPECT_EQ(lines[6], "int y = 1;");
  EXPECT_FALSE(ExpandOwnMacros("#error no\n").ok());
}

TEST(SourceExpandTest, PastedNamesAreFoundOnlyAfterExpansion) {
  const std::string text =
      "#define CAT(a, b) a##b\n"
      "void f(cudaStream_t s, cudaStreamAttrValue v) {\n"
      "  cudaStreamSetAttribute(s, CAT(cudaStreamAttribute, AccessPolicyWindow), &v);\n"
      "  std::thread t(g);\n"
      "}\n";
  std::vector<RuleHit> raw = ScanNativeSource(text, "k.cu");
  EXPECT_FALSE(Has(raw, "cpp.l2_persist", 3));
  EXPECT_TRUE(Has(raw, "cpp.thread", 4));
  std::vector<RuleHit> more = ScanExpandedSource(text, "k.cu", raw);
  ASSERT_TRUE(Has(more, "cpp.l2_persist", 3));
  EXPECT_FALSE(Has(more, "cpp.thread", 4));  // Already found as written: not twice.
  EXPECT_NE(more[0].message.find("after the preprocessor"), std::string::npos);
  std::vector<RuleHit> failed = ScanExpandedSource("#error stop\n", "k.cu", {});
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0].rule, "cpp.unexpanded");
  EXPECT_EQ(failed[0].severity, "evidence");
}

}  // namespace
}  // namespace anvil
