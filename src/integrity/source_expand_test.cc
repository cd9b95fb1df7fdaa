#include "integrity/source_expand.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "integrity/source_scan.h"

namespace anvil {
namespace {

bool Has(const std::vector<RuleHit>& hits, const std::string& rule, int line) {
  return std::any_of(hits.begin(), hits.end(), [&](const RuleHit& h) { return h.rule == rule && h.line == line; });
}

NativeSource Cuda(const std::string& text) { return {"k.cu", text, true, {}}; }
NativeSource Cpp(const std::string& text, std::vector<std::string> defines = {}) {
  return {"k.cpp", text, false, std::move(defines)};
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::string line;
  std::istringstream in(text);
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

TEST(SourceExpandTest, ExpandsTheCandidatesOwnMacrosLineForLine) {
  auto e =
      ExpandOwnMacros(Cuda("#include <cuda_runtime.h>\n"
                           "#define PASTE(a, b) a##b\n"
                           "int x = PASTE(foo, bar);\n"
                           "#if 0\n"
                           "int dead;\n"
                           "#endif\n"
                           "int y = __CUDACC__;\n"));
  ASSERT_TRUE(e.ok()) << e.message();
  const auto lines = Lines(e.value());
  ASSERT_EQ(lines.size(), 7u);
  EXPECT_EQ(lines[2], "int x = foobar;");
  EXPECT_EQ(lines[4], "");  // Dead branch.
  EXPECT_EQ(lines[6], "int y = 1;");
  EXPECT_FALSE(ExpandOwnMacros(Cuda("#if 1 +\n#endif\n")).ok());  // Malformed: the build rejects it too.
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
  std::vector<RuleHit> more = ScanExpandedSource(Cuda(text), raw);
  ASSERT_TRUE(Has(more, "cpp.l2_persist", 3));
  EXPECT_FALSE(Has(more, "cpp.thread", 4));  // Already found as written: not twice.
  EXPECT_NE(more[0].message.find("after the preprocessor"), std::string::npos);
  std::vector<RuleHit> failed = ScanExpandedSource(Cuda("#if 1 +\n#endif\n"), {});
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0].rule, "cpp.unexpanded");
  EXPECT_EQ(failed[0].severity, "evidence");
}

// Red-team sweep 2 (issue 4): the scan's preprocessor must be the build's.
TEST(SourceExpandTest, AnErrorDirectiveCannotBlindTheScan) {
  // `#ifdef __CUDACC__ #error`: the scan's pass defined __CUDACC__ for C++ too, failed, and scanned as written only.
  const std::string text =
      "#ifdef __CUDACC__\n"
      "#error not for nvcc\n"
      "#endif\n"
      "#define make_task clone\n"
      "int f(void* stack) { return make_task(0, stack, 0, 0); }\n";
  const auto hits = ScanExpandedSource(Cpp(text), ScanNativeSource(text, "k.cpp"));
  EXPECT_TRUE(Has(hits, "cpp.process", 5));
  EXPECT_FALSE(Has(hits, "cpp.unexpanded", 0));
  // The same in a CUDA source: #error in the branch nvcc does not take.
  const std::string cuda = "#if !defined(__CUDACC_VER_MAJOR__)\n#error host compilers only\n#endif\n" + text.substr(45);
  EXPECT_TRUE(Has(ScanExpandedSource(Cuda(cuda), ScanNativeSource(cuda, "k.cu")), "cpp.process", 5));
}

TEST(SourceExpandTest, TheBuildsDefinesAreTheScans) {
  // extra_cflags=["-DKERNEL=at::cpu::mm"]: the source only says KERNEL.
  const std::string text = "at::Tensor f(at::Tensor a, at::Tensor b) { return KERNEL(a, b); }\n";
  EXPECT_TRUE(ScanNativeSource(text, "k.cpp").empty());
  const auto hits = ScanExpandedSource(Cpp(text, {"-DKERNEL=at::cpu::mm"}), {});
  EXPECT_TRUE(Has(hits, "cpp.aten_compute", 1));
}

TEST(SourceExpandTest, CudaDevicePassIsScannedToo) {
  const std::string text =
      "#ifdef __CUDA_ARCH__\n"
      "#define HIDE cudaStreamAttributeAccessPolicyWindow\n"
      "#else\n"
      "#define HIDE 0\n"
      "#endif\n"
      "int x = HIDE;\n";
  EXPECT_TRUE(Has(ScanExpandedSource(Cuda(text), {}), "cpp.l2_persist", 6));
}

TEST(SourceExpandTest, AnIfOnAHeadersMacroIsExpandedWithItsIncludes) {
  // Without its include the #if is malformed: LIB_AT_LEAST is a function-like macro of the header.
  const auto dir = std::filesystem::temp_directory_path() / ("anvil-expand-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  { std::ofstream(dir / "version.h") << "#define LIB_AT_LEAST(major) (3 >= (major))\n"; }
  const std::string text =
      "#include <version.h>\n"
      "#if LIB_AT_LEAST(2)\n"
      "#define GO system\n"
      "#endif\n"
      "int f() { return GO(\"ls\"); }\n";
  const auto hits = ScanExpandedSource(Cpp(text), {}, {dir});
  std::filesystem::remove_all(dir);
  EXPECT_TRUE(Has(hits, "cpp.process", 5));
}

}  // namespace
}  // namespace anvil
