#include "compile/build.h"

#include <gtest/gtest.h>

#include "core/files.h"

namespace anvil {
namespace {

namespace fs = std::filesystem;

TEST(SafeFlagsTest, KeepsOptimisationAndDropsDangerousFlags) {
  std::vector<std::string> dropped;
  auto kept = SafeFlags(
      {"-O3", "-DFOO=1", "--use_fast_math", "-fplugin=/tmp/evil.so", "@/etc/passwd", "-Wl,--wrap=cudaEventElapsedTime",
       "-o/tmp/x", "-march=native", "", "-mf16c", "-mavx512f", "-wrapper", "sh,-c,id", "-MF/root/.bashrc", "-B/tmp"},
      &dropped);
  // Machine flags are code generation (-mf16c for _cvtss_sh); a wrapper, a dependency file or a tool path are not.
  EXPECT_EQ(kept,
            (std::vector<std::string>{"-O3", "-DFOO=1", "--use_fast_math", "-march=native", "-mf16c", "-mavx512f"}));
  EXPECT_EQ(dropped.size(), 8u);
}

class NativeBuildTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = MakeTempDir("anvil-build-test-").value(); }
  void TearDown() override { (void)RemoveTree(dir_); }
  CompileResult Build(const std::string& text) {
    fs::path src = dir_ / "cand.cpp";
    EXPECT_TRUE(WriteFileAtomic(src, text).ok());
    return BuildNative(src, {"cand.cpp", text}, Backend::FromName("cpu").value(), ArtifactCache(dir_ / "cache"),
                       BuildOptions{});
  }
  fs::path dir_;
};

TEST_F(NativeBuildTest, BuildsAndCachesByContent) {
  const std::string ok =
      "#include \"anvil/native.h\"\nextern \"C\" int anvil_forward(const anvil_tensor*, int, "
      "anvil_tensor*, int, void*) { return 0; }\n";
  CompileResult first = Build(ok);
  ASSERT_TRUE(first.ok) << first.log;
  EXPECT_FALSE(first.cached);
  ASSERT_TRUE(fs::exists(first.artifacts.at("native")));
  CompileResult second = Build(ok);
  EXPECT_TRUE(second.ok);
  EXPECT_TRUE(second.cached);
  EXPECT_EQ(second.artifacts.at("native"), first.artifacts.at("native"));
}

TEST_F(NativeBuildTest, ErrorsAreMappedToTheCandidateFile) {
  CompileResult r = Build("int f() {\n  return undeclared_name;\n}\n");
  EXPECT_FALSE(r.ok);
  ASSERT_FALSE(r.diagnostics.empty()) << r.log;
  EXPECT_EQ(r.diagnostics[0].file, "cand.cpp");
  EXPECT_EQ(r.diagnostics[0].line, 2);
  EXPECT_EQ(r.diagnostics[0].severity, "error");
  EXPECT_NE(r.summary.find("undeclared_name"), std::string::npos);
  EXPECT_TRUE(r.artifacts.empty());
}

}  // namespace
}  // namespace anvil
