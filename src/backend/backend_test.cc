#include "backend/backend.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

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

TEST(BackendTest, NoProcessOnAGpuRunsUnderMps) {
  EXPECT_TRUE(Backend::FromName("cpu").value().ChildEnv().empty());
  using Env = std::vector<std::pair<std::string, std::string>>;
  const Backend cuda = Backend::FromName("cuda").value();
  // Where no MPS control daemon can be: a CUDA process then runs without MPS.
  EXPECT_EQ(cuda.ChildEnv(), (Env{{"CUDA_MPS_PIPE_DIRECTORY", "/dev/null/anvil-no-mps"}}));
  const Env on_gpu = cuda.OnDevice(0).ChildEnv();
  ASSERT_EQ(on_gpu.size(), 2u);
  EXPECT_EQ(on_gpu[0].first, "CUDA_MPS_PIPE_DIRECTORY");
  EXPECT_EQ(on_gpu[1].first, "CUDA_VISIBLE_DEVICES");
  // And no one can make that folder: its parent is a file.
  EXPECT_NE(::mkdir(kNoMpsPipeDirectory, 0700), 0);
}

}  // namespace
}  // namespace anvil
