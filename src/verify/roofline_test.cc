#include "verify/roofline.h"

#include <gtest/gtest.h>

namespace anvil {
namespace {

TEST(RooflineTest, KnowsTheModelsByTheirNvidiaSmiNames) {
  EXPECT_EQ(PeakMemoryBandwidthGBs("NVIDIA H200"), 4800);
  EXPECT_EQ(PeakMemoryBandwidthGBs("NVIDIA GH200 480GB"), 4000);
  EXPECT_EQ(PeakMemoryBandwidthGBs("NVIDIA H100 80GB HBM3"), 3350);
  EXPECT_EQ(PeakMemoryBandwidthGBs("NVIDIA H100 PCIe"), 2000);
  EXPECT_EQ(PeakMemoryBandwidthGBs("NVIDIA A100-SXM4-80GB"), 2039);
  EXPECT_EQ(PeakMemoryBandwidthGBs("NVIDIA A100-SXM4-40GB"), 1555);
  EXPECT_EQ(PeakMemoryBandwidthGBs("NVIDIA L40S"), 864);
  EXPECT_EQ(PeakMemoryBandwidthGBs("Intel(R) Xeon(R) CPU"), 0);
  EXPECT_EQ(PeakMemoryBandwidthGBs(""), 0);
}

TEST(RooflineTest, FloorIsOutputBytesOverSlackTimesPeak) {
  // 4096 x 4096 fp32 = 64 MiB; at 4.8 TB/s with 4x slack: 67108864 / 19.2e12 s = 0.003495 ms.
  EXPECT_NEAR(RooflineFloorMs(int64_t{4096} * 4096 * 4, 4800), 0.0034953, 1e-6);
  EXPECT_EQ(RooflineFloorMs(0, 4800), 0);
  EXPECT_EQ(RooflineFloorMs(1 << 20, 0), 0);
}

TEST(RooflineTest, OutputBytesFromTheSpec) {
  EXPECT_EQ(SpecOutputBytes(R"({"outputs": [{"name": "out0", "dtype": "float32", "shape": [16, 1024]},
                                              {"name": "out1", "dtype": "float16", "shape": [3]}]})"),
            16 * 1024 * 4 + 6);
  EXPECT_EQ(SpecOutputBytes(R"({"outputs": [{"name": "out0", "dtype": "float64", "shape": []}]})"), 8);
  EXPECT_EQ(SpecOutputBytes("not json"), 0);
  EXPECT_EQ(SpecOutputBytes(R"({"outputs": [{"dtype": "complex64", "shape": [2]}]})"), 0);
  EXPECT_EQ(SpecOutputBytes(R"({"inputs": []})"), 0);
}

}  // namespace
}  // namespace anvil
