#include "tasks/meta_spec.h"

#include <gtest/gtest.h>

#include "core/environment.h"
#include "core/temp_dir_fixture.h"

namespace anvil {
namespace {

class MetaSpecTest : public TempDirTest {};

TEST_F(MetaSpecTest, DerivesSpecsWithoutTensorsAndCachesThem) {
  auto relu = LoadTask(SourceDir() / "examples" / "tasks" / "relu.py");
  auto needs_values = LoadTask(SourceDir() / "tests" / "data" / "spec_tasks" / "needs_values.py");
  ASSERT_TRUE(relu.ok() && needs_values.ok());
  auto specs = MetaSpecs({relu.value(), needs_values.value()}, dir_);
  ASSERT_TRUE(specs.ok()) << specs.message();
  const MetaSpec& r = specs.value()[relu.value().sha256];
  EXPECT_TRUE(r.error.empty()) << r.error;
  EXPECT_NE(r.json.find("\"without_tensors\": true"), std::string::npos) << r.json;
  EXPECT_NE(r.json.find("aten.relu"), std::string::npos) << r.json;
  const MetaSpec& v = specs.value()[needs_values.value().sha256];
  EXPECT_TRUE(v.json.empty());
  EXPECT_NE(v.error.find("meta"), std::string::npos) << v.error;
  // The derived one is cached (the failed one is not); the next call reads it without a worker.
  EXPECT_TRUE(std::filesystem::exists(dir_ / "specs" / (relu.value().sha256 + ".meta-v1.json")));
  EXPECT_FALSE(std::filesystem::exists(dir_ / "specs" / (needs_values.value().sha256 + ".meta-v1.json")));
  auto again = MetaSpecs({relu.value()}, dir_);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again.value()[relu.value().sha256].json, r.json);
}

}  // namespace
}  // namespace anvil
