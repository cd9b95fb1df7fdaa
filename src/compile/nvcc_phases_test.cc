#include "compile/nvcc_phases.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "backend/backend.h"
#include "core/files.h"
#include "core/subprocess.h"

namespace anvil {
namespace {

namespace fs = std::filesystem;

// The shape `nvcc -dryrun -c` prints (CUDA 13, one architecture), shortened.
const char kDryRun[] =
    "#$ _NVVM_BRANCH_=nvvm\n"
    "#$ _SPACE_= \n"
    "#$ CICC_PATH=/usr/local/cuda/bin/../nvvm/bin\n"
    "#$ INCLUDES=\"-I/usr/local/cuda/include\"  \n"
    "#$ SYSTEM_INCLUDES=\"-isystem\" \"/usr/local/cuda/include/cccl\"  \n"
    "#$ gcc -E -x c++ -D__CUDACC__ \"x.cu\" -o \"/t/x.cpp4.ii\" \n"
    "#$ cudafe++ --c++17 --gen_c_file_name \"/t/x.cudafe1.cpp\" --gen_module_id_file --module_id_file_name "
    "\"/t/x.module_id\" \"/t/x.cpp4.ii\" \n"
    "#$ gcc -D__CUDA_ARCH__=900 -E -x c++ \"x.cu\" -o \"/t/x.cpp1.ii\" \n"
    "#$ \"$CICC_PATH/cicc\" --c++17 -arch compute_90 --module_id_file_name \"/t/x.module_id\" \"/t/x.cpp1.ii\" -o "
    "\"/t/x.ptx\"\n"
    "#$ ptxas -arch=sm_90 \"/t/x.ptx\" -o \"/t/x.cubin\" \n"
    "#$ fatbinary -64 \"--image3=kind=elf,sm=90,file=/t/x.cubin\" --embedded-fatbin=\"/t/x.fatbin.c\" \n"
    "#$ rm /t/x.fatbin\n"
    "#$ gcc -c -x c++ -m64 \"/t/x.cudafe1.cpp\" -o \"x.o\" \n";

TEST(NvccPhasesTest, SplitsTheDryRunIntoTwoFrontEndsAndTheHostCompile) {
  auto phases = ParseNvccDryRun(kDryRun);
  ASSERT_TRUE(phases.has_value());
  ASSERT_EQ(phases->host.size(), 2u);
  EXPECT_EQ(phases->host[0].rfind("gcc -E", 0), 0u);
  // cudafe++ now reads the id anvil writes.
  EXPECT_EQ(phases->host[1].find("--gen_module_id_file "), std::string::npos);
  EXPECT_NE(phases->host[1].find("--module_id_file_name \"/t/x.module_id\""), std::string::npos);
  ASSERT_EQ(phases->device.size(), 5u);
  EXPECT_NE(phases->device[1].find("cicc"), std::string::npos);
  EXPECT_EQ(phases->final.rfind("gcc -c", 0), 0u);
  EXPECT_EQ(phases->module_id_file, fs::path("/t/x.module_id"));
  // Simple assignments are kept for the scripts; nvcc's quoted lists are not.
  bool cicc_path = false;
  for (const auto& [name, value] : phases->env) {
    EXPECT_NE(name, "SYSTEM_INCLUDES");
    cicc_path = cicc_path || (name == "CICC_PATH" && value == "/usr/local/cuda/bin/../nvvm/bin");
  }
  EXPECT_TRUE(cicc_path);
}

TEST(NvccPhasesTest, AnythingElseRunsPlainNvcc) {
  std::string text = kDryRun;
  // No module id handed from cudafe++ to cicc (another nvcc version).
  std::string no_id = text;
  no_id.replace(no_id.find("--gen_module_id_file "), 21, "");
  EXPECT_FALSE(ParseNvccDryRun(no_id).has_value());
  // A device link step: more than one compile.
  std::string linked = text;
  linked.insert(linked.find("#$ rm"), "#$ nvlink --arch=sm_90 x.cubin\n");
  EXPECT_FALSE(ParseNvccDryRun(linked).has_value());
  // Not a compile to an object (-c).
  std::string exe = text;
  exe.replace(exe.find("gcc -c -x c++"), 13, "gcc -x c++");
  EXPECT_FALSE(ParseNvccDryRun(exe).has_value());
  EXPECT_FALSE(ParseNvccDryRun("").has_value());
}

class NvccPhasesBuildTest : public ::testing::Test {
 protected:
  void SetUp() override {
    nvcc_ = Backend::FromName("cuda").value().NativeCompiler();
    ProcessSpec probe;
    probe.argv = {nvcc_, "--version"};
    probe.deadline = std::chrono::seconds(30);
    auto r = RunProcess(probe);
    if (!r.ok() || !r.value().Succeeded()) GTEST_SKIP() << "no nvcc on this machine";
    dir_ = MakeTempDir("anvil-nvcc-phases-").value();
    box_ = CompilerSandbox::Make({{}, {dir_}}).value();  // As in a build: the compiles write the test's folder.
  }
  void TearDown() override {
    if (!dir_.empty()) (void)RemoveTree(dir_);
  }
  std::vector<std::string> Compile(const std::string& out) {
    return {nvcc_, "-gencode",           "arch=compute_90,code=sm_90", "-O3", "-c", (dir_ / "k.cu").string(),
            "-o",  (dir_ / out).string()};
  }
  std::string Section(const std::string& object, const std::string& section) {
    ProcessSpec spec;
    fs::path out = dir_ / (object + section);
    spec.argv = {"objcopy", "-O", "binary", "--only-section=" + section, (dir_ / object).string(), out.string()};
    spec.deadline = std::chrono::seconds(30);
    EXPECT_TRUE(RunProcess(spec).value().Succeeded());
    return ReadFile(out).value();
  }
  std::string nvcc_;
  fs::path dir_;
  CompilerSandbox box_;
};

TEST_F(NvccPhasesBuildTest, BuildsTheSameDeviceCodeAsNvcc) {
  ASSERT_TRUE(WriteFileAtomic(dir_ / "k.cu",
                              "__global__ void scale(float* x, float a, int n) {\n"
                              "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                              "  if (i < n) x[i] *= a;\n"
                              "}\n"
                              "void launch(float* x, float a, int n) { scale<<<(n + 255) / 256, 256>>>(x, a, n); }\n")
                  .ok());
  auto phased = RunNvccInPhases(Compile("phased.o"), dir_ / "tmp", std::chrono::seconds(120), box_);
  ASSERT_TRUE(phased.ok()) << phased.message();
  ASSERT_TRUE(phased.value().ok) << phased.value().log;
  EXPECT_NE(phased.value().log.find("ran at once"), std::string::npos) << phased.value().log;
  // The steps' times, for the verdict: the two front ends overlap, the host compile comes after both.
  const auto& steps = phased.value().step_seconds;
  ASSERT_EQ(steps.size(), 3u);
  for (const char* step : {"nvcc_host_front", "nvcc_device", "nvcc_host_compile"}) {
    ASSERT_TRUE(steps.count(step)) << step;
    EXPECT_GT(steps.at(step), 0) << step;
  }
  EXPECT_LE(std::max(steps.at("nvcc_host_front"), steps.at("nvcc_device")) + steps.at("nvcc_host_compile"),
            phased.value().seconds);
  EXPECT_FALSE(fs::exists(dir_ / "tmp"));  // nvcc's intermediate files are gone.
  auto plain = RunCompiler(Compile("plain.o"), std::chrono::seconds(120), box_);
  ASSERT_TRUE(plain.ok() && plain.value().ok);
  const std::string code = Section("phased.o", ".nv_fatbin");
  EXPECT_GT(code.size(), 1000u);
  EXPECT_EQ(code, Section("plain.o", ".nv_fatbin"));
}

TEST_F(NvccPhasesBuildTest, ReportsTheFrontEndsErrorOnce) {
  ASSERT_TRUE(WriteFileAtomic(dir_ / "k.cu", "__global__ void broken(float* x) { x[0] = undeclared_name; }\n").ok());
  auto phased = RunNvccInPhases(Compile("phased.o"), dir_ / "tmp", std::chrono::seconds(120), box_);
  ASSERT_TRUE(phased.ok()) << phased.message();
  EXPECT_FALSE(phased.value().ok);
  const std::string& log = phased.value().log;
  EXPECT_NE(log.find("ran at once"), std::string::npos) << log;
  const std::size_t first = log.find("identifier \"undeclared_name\" is undefined");
  ASSERT_NE(first, std::string::npos) << log;
  EXPECT_EQ(log.find("identifier \"undeclared_name\" is undefined", first + 1), std::string::npos) << log;
  EXPECT_FALSE(fs::exists(dir_ / "phased.o"));
}

// nvcc's host compile with the torch part precompiled (compile/host_pch.h), for real: builds of sources that share
// a preamble, in folders of their own.
TEST_F(NvccPhasesBuildTest, LaterBuildsUseThePrecompiledHostPartAndWriteTheSameObject) {
  const std::string preamble = "#include <vector>\n#include <map>\n#include <string>\n";
  const std::string own =
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
  ArtifactCache cache(dir_ / "cache");
  auto build = [&](const std::string& name, const std::string& text, bool with_pch) {
    const fs::path folder = dir_ / name;
    fs::create_directories(folder);
    EXPECT_TRUE(WriteFileAtomic(folder / "k.cu", preamble + text).ok());
    std::vector<std::string> argv = {nvcc_,
                                     "-gencode",
                                     "arch=compute_90,code=sm_90",
                                     "-DTORCH_EXTENSION_NAME=" + name,
                                     "-c",
                                     (folder / "k.cu").string(),
                                     "-o",
                                     (folder / "k.o").string()};
    auto run = RunNvccInPhases(argv, folder / "tmp", std::chrono::seconds(300), box_,
                               with_pch ? HostPchUse{&cache, 4} : HostPchUse{});
    EXPECT_TRUE(run.ok()) << run.message();
    return run.ok() ? run.value() : CompilerRun{};
  };
  CompilerRun first = build("first", own, true);
  ASSERT_TRUE(first.ok) << first.log;
  EXPECT_FALSE(first.step_seconds.count("nvcc_host_pch")) << first.log;  // A flag set seen once: no PCH yet.
  CompilerRun again = build("again", own, true);
  ASSERT_TRUE(again.ok) << again.log;
  EXPECT_TRUE(again.step_seconds.count("nvcc_host_pch")) << again.log;  // Made beside its plain compile.
  CompilerRun second = build("second", own, true);
  ASSERT_TRUE(second.ok) << second.log;
  EXPECT_NE(second.log.find("used the precompiled"), std::string::npos) << second.log;
  EXPECT_FALSE(second.step_seconds.count("nvcc_host_pch"));
  CompilerRun plain = build("plain", own, false);
  ASSERT_TRUE(plain.ok) << plain.log;
  for (const char* section : {".text", ".data", ".rodata", ".nv_fatbin", ".nvFatBinSegment", ".init_array"}) {
    EXPECT_EQ(Section("second/k.o", section), Section("plain/k.o", section)) << section;
  }
  EXPECT_GT(Section("second/k.o", ".text").size(), 100u);
  // A source whose own part does not compile gets the compiler's error, as without the PCH.
  CompilerRun broken = build("broken", "void host_only() { undeclared_host_name(); }\n", true);
  EXPECT_FALSE(broken.ok);
  EXPECT_NE(broken.log.find("undeclared_host_name"), std::string::npos) << broken.log;
}

}  // namespace
}  // namespace anvil
