#include "backend/backend.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

namespace anvil {
namespace {

TEST(BackendTest, KnownNamesOnly) {
  EXPECT_TRUE(Backend::FromName("cpu").ok());
  EXPECT_TRUE(Backend::FromName("cuda").ok());
  auto bad = Backend::FromName("tpu");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("cpu or cuda"), std::string::npos);
}

TEST(BackendTest, CpuAlwaysHasADeviceAndAModel) {
  Backend cpu = Backend::FromName("cpu").value();
  EXPECT_TRUE(cpu.HasDevice());
  EXPECT_FALSE(cpu.DeviceModel().empty());
  EXPECT_EQ(cpu.DeviceModel(), cpu.DeviceModel());  // Memoized, stable.
  EXPECT_EQ(cpu.NativeCompiler(), "g++");
  EXPECT_TRUE(cpu.ArchFlags().empty());
}

TEST(BackendTest, CudaCompilesForAnArch) {
  Backend cuda = Backend::FromName("cuda").value();
  ASSERT_EQ(cuda.ArchFlags().size(), 1u);
  EXPECT_NE(cuda.ArchFlags()[0].find("sm_"), std::string::npos);
  EXPECT_NE(cuda.NativeCompiler().find("nvcc"), std::string::npos);
}

TEST(BackendTest, DeviceMemoryIsKnownOnlyForAGpuThatAnswers) {
  EXPECT_FALSE(Backend::FromName("cpu").value().DeviceMemoryBytes().has_value());
  Backend cuda = Backend::FromName("cuda").value();
  const auto bytes = cuda.DeviceMemoryBytes();
  if (!cuda.HasDevice()) {
    EXPECT_FALSE(bytes.has_value());  // The CPU machine: no GPU.
  } else {
    ASSERT_TRUE(bytes.has_value());  // The GPU machine: at least a gigabyte.
    EXPECT_GE(*bytes, std::uint64_t{1} << 30);
    EXPECT_EQ(cuda.OnDevice(0).DeviceMemoryBytes(), bytes);  // The first GPU either way.
  }
}

TEST(BackendTest, WhereAnMpsDaemonListensNoProcessOnAGpuRunsUnderIt) {
  using Env = std::vector<std::pair<std::string, std::string>>;
  const Backend cuda = Backend::FromName("cuda").value();
  const char* saved = std::getenv("CUDA_MPS_PIPE_DIRECTORY");
  const std::string had = saved != nullptr ? saved : "";
  const std::string dir = testing::TempDir() + "anvil-mps-" + std::to_string(::getpid());
  ASSERT_EQ(::mkdir(dir.c_str(), 0700), 0);
  ::setenv("CUDA_MPS_PIPE_DIRECTORY", dir.c_str(), 1);
  // No daemon's pipe there: nothing changes.
  EXPECT_FALSE(MpsDaemonListens());
  EXPECT_TRUE(cuda.ChildEnv().empty());
  EXPECT_EQ(cuda.OnDevice(0).ChildEnv().size(), 1u);
  // A daemon's `control` pipe: its processes look for one where none can be, and run without MPS.
  const std::string control = dir + "/control";
  ASSERT_EQ(::mkfifo(control.c_str(), 0600), 0);
  EXPECT_TRUE(MpsDaemonListens());
  EXPECT_EQ(cuda.ChildEnv(), (Env{{"CUDA_MPS_PIPE_DIRECTORY", "/dev/null/anvil-no-mps"}}));
  const Env on_gpu = cuda.OnDevice(0).ChildEnv();
  ASSERT_EQ(on_gpu.size(), 2u);
  EXPECT_EQ(on_gpu[1].first, "CUDA_VISIBLE_DEVICES");
  EXPECT_TRUE(Backend::FromName("cpu").value().ChildEnv().empty());
  EXPECT_NE(::mkdir(kNoMpsPipeDirectory, 0700), 0);  // No one can make that folder: its parent is a file.
  ::unlink(control.c_str());
  ::rmdir(dir.c_str());
  if (saved != nullptr) {
    ::setenv("CUDA_MPS_PIPE_DIRECTORY", had.c_str(), 1);
  } else {
    ::unsetenv("CUDA_MPS_PIPE_DIRECTORY");
  }
}

}  // namespace
}  // namespace anvil
