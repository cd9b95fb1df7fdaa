#include "backend/backend.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace anvil
