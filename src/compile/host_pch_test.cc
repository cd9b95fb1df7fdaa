#include "compile/host_pch.h"

#include <gtest/gtest.h>

#include "backend/backend.h"
#include "compile/nvcc_phases.h"
#include "core/files.h"

namespace anvil {
namespace {

namespace fs = std::filesystem;

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

// The real thing: nvcc in phases, three builds of sources that share a preamble, in folders of their own.
class HostPchBuildTest : public ::testing::Test {
 protected:
  void SetUp() override {
    nvcc_ = Backend::FromName("cuda").value().NativeCompiler();
    ProcessSpec probe;
    probe.argv = {nvcc_, "--version"};
    probe.deadline = std::chrono::seconds(30);
    auto r = RunProcess(probe);
    if (!r.ok() || !r.value().Succeeded()) GTEST_SKIP() << "no nvcc on this machine";
    dir_ = MakeTempDir("anvil-host-pch-").value();
  }
  void TearDown() override {
    if (!dir_.empty()) (void)RemoveTree(dir_);
  }
  // Builds `own` after the preamble in build folder `name`; returns the run.
  CompilerRun Build(const std::string& name, const std::string& own, bool with_pch) {
    const fs::path folder = dir_ / name;
    fs::create_directories(folder);
    EXPECT_TRUE(WriteFileAtomic(folder / "k.cu", std::string(kPreamble) + own).ok());
    std::vector<std::string> argv = {nvcc_,
                                     "-gencode",
                                     "arch=compute_90,code=sm_90",
                                     "-DTORCH_EXTENSION_NAME=" + name,
                                     "-c",
                                     (folder / "k.cu").string(),
                                     "-o",
                                     (folder / "k.o").string()};
    ArtifactCache cache(dir_ / "cache");
    auto run = RunNvccInPhases(argv, folder / "tmp", std::chrono::seconds(300),
                               with_pch ? HostPchUse{&cache, 4} : HostPchUse{});
    EXPECT_TRUE(run.ok()) << run.message();
    return run.ok() ? run.value() : CompilerRun{};
  }
  std::string Section(const std::string& name, const std::string& section) {
    ProcessSpec spec;
    const fs::path out = dir_ / (name + section);
    spec.argv = {"objcopy", "-O", "binary", "--only-section=" + section, (dir_ / name / "k.o").string(), out.string()};
    spec.deadline = std::chrono::seconds(30);
    EXPECT_TRUE(RunProcess(spec).value().Succeeded());
    return ReadFile(out).value();
  }
  static constexpr char kPreamble[] = "#include <vector>\n#include <map>\n#include <string>\n";
  static constexpr char kOwn[] =
      "__global__ void scale(float* x, float a, int n) {\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) x[i] *= a;\n"
      "}\n"
      "namespace { std::map<std::string, int> calls; }\n"
      "std::vector<float> launch(float* x, float a, int n) {\n"
      "  ++calls[\"launch\"];\n"
      "  scale<<<(n + 255) / 256, 256>>>(x, a, n);\n"
      "  return std::vector<float>(n, a);\n"
      "}\n";
  std::string nvcc_;
  fs::path dir_;
};

TEST_F(HostPchBuildTest, LaterBuildsUseThePrecompiledPartAndWriteTheSameObject) {
  CompilerRun first = Build("first", kOwn, true);
  ASSERT_TRUE(first.ok) << first.log;
  EXPECT_FALSE(first.step_seconds.count("nvcc_host_pch")) << first.log;  // A flag set seen once: no PCH yet.
  CompilerRun again = Build("again", kOwn, true);
  ASSERT_TRUE(again.ok) << again.log;
  EXPECT_TRUE(again.step_seconds.count("nvcc_host_pch")) << again.log;  // Made beside its plain compile.
  CompilerRun second = Build("second", kOwn, true);
  ASSERT_TRUE(second.ok) << second.log;
  EXPECT_NE(second.log.find("used the precompiled"), std::string::npos) << second.log;
  EXPECT_FALSE(second.step_seconds.count("nvcc_host_pch"));
  CompilerRun plain = Build("plain", kOwn, false);
  ASSERT_TRUE(plain.ok) << plain.log;
  for (const char* section : {".text", ".data", ".rodata", ".nv_fatbin", ".nvFatBinSegment", ".init_array"}) {
    EXPECT_EQ(Section("second", section), Section("plain", section)) << section;
  }
  EXPECT_GT(Section("second", ".text").size(), 100u);
  // A source whose own part does not compile gets the compiler's error, as without the PCH.
  CompilerRun broken = Build("broken", "void host_only() { undeclared_host_name(); }\n", true);
  EXPECT_FALSE(broken.ok);
  EXPECT_NE(broken.log.find("undeclared_host_name"), std::string::npos) << broken.log;
}

}  // namespace
}  // namespace anvil
