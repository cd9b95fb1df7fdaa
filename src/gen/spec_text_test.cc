#include "gen/spec_text.h"

#include <gtest/gtest.h>

namespace anvil {
namespace {

constexpr const char* kSpec = R"({
  "inputs": [{"name": "in0", "dtype": "float32", "shape": [16, 1024], "strides": [1024, 1]},
             {"name": "in1", "scalar": 0.5}],
  "params": [{"name": "linear.weight", "kind": "parameter", "dtype": "float16", "shape": [8, 4], "strides": [4, 1]}],
  "outputs": [{"name": "out0", "dtype": "float32", "shape": [16, 8], "strides": [8, 1]}],
  "scalars": {"negative_slope": 0.01},
  "init_inputs": [1024, {"tuple": [5, 7]}],
  "ops": [{"op": "aten.relu.default", "in_shapes": [[16, 1024]], "out_shapes": [[16, 1024]]},
          {"op": "aten.relu.default", "in_shapes": [[16, 1024]], "out_shapes": [[16, 1024]]},
          {"op": "aten.addmm.default", "in_shapes": [[8], [16, 4], [4, 8]], "out_shapes": [[16, 8]]}]})";

TEST(SpecTextTest, EveryTensorWithItsShapeStridesAndDtype) {
  const std::string text = TensorMetadataText(kSpec, "");
  EXPECT_NE(text.find("in0: float32 [16, 1024], strides [1024, 1]"), std::string::npos) << text;
  EXPECT_NE(text.find("in1: 0.5 (not a tensor)"), std::string::npos) << text;
  EXPECT_NE(text.find("linear.weight: float16 [8, 4], strides [4, 1] (parameter)"), std::string::npos) << text;
  EXPECT_NE(text.find("out0: float32 [16, 8]"), std::string::npos) << text;
  EXPECT_NE(text.find("negative_slope=0.01"), std::string::npos) << text;
  EXPECT_NE(text.find("[1024,{\"tuple\":[5,7]}]"), std::string::npos) << text;
}

TEST(SpecTextTest, TheOpTraceCollapsesRunsAndIsCapped) {
  const std::string trace = OpTraceText(kSpec);
  EXPECT_EQ(trace,
            "aten.relu.default  [16, 1024] -> [16, 1024]  x2\n"
            "aten.addmm.default  [8], [16, 4], [4, 8] -> [16, 8]");
  EXPECT_EQ(OpTraceText(kSpec, 1), "aten.relu.default  [16, 1024] -> [16, 1024]  x2\n... and 1 more");
}

TEST(SpecTextTest, AMissingSpecSaysWhy) {
  const std::string text = TensorMetadataText("", "RuntimeError: Tensor.item() cannot be called on meta tensors");
  EXPECT_NE(text.find("could not be derived"), std::string::npos);
  EXPECT_NE(text.find("item()"), std::string::npos);
  EXPECT_EQ(OpTraceText(""), "(no op trace: see above)");
}

}  // namespace
}  // namespace anvil
