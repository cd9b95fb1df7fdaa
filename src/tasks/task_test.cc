#include "tasks/task.h"

#include <gtest/gtest.h>

#include "core/temp_dir_fixture.h"

namespace anvil {
namespace {

namespace fs = std::filesystem;

using TaskTest = TempDirTest;

TEST_F(TaskTest, LoadsNameLevelAndHash) {
  fs::path f = Write("level2/7_Conv.py", "class Model: pass\n");
  auto t = LoadTask(f);
  ASSERT_TRUE(t.ok()) << t.message();
  EXPECT_EQ(t.value().name, "7_Conv");
  EXPECT_EQ(t.value().level, 2);
  EXPECT_EQ(t.value().sha256.size(), 64u);
  EXPECT_TRUE(t.value().path.is_absolute());
}

TEST_F(TaskTest, SidecarSetsLevelAndToleranceAndChangesHash) {
  fs::path f = Write("relu.py", "x = 1\n");
  std::string before = LoadTask(f).value().sha256;
  Write("relu.anvil.json", R"({"level": 3, "tolerance": {"float16": {"atol": 0.05, "rtol": 0.01}}})");
  auto t = LoadTask(f);
  ASSERT_TRUE(t.ok()) << t.message();
  EXPECT_EQ(t.value().level, 3);
  ASSERT_EQ(t.value().tolerances.size(), 1u);
  EXPECT_EQ(t.value().tolerances[0].dtype, "float16");
  EXPECT_DOUBLE_EQ(t.value().tolerances[0].atol, 0.05);
  EXPECT_NE(t.value().sha256, before);
}

TEST_F(TaskTest, MalformedSidecarIsAClearError) {
  fs::path f = Write("relu.py", "x = 1\n");
  Write("relu.anvil.json", R"({"tolerance": {"float32": {"atol": "tight"}}})");
  auto t = LoadTask(f);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.message().find("relu.anvil.json"), std::string::npos);
  EXPECT_NE(t.message().find("atol"), std::string::npos);
  Write("relu.anvil.json", "{not json");
  EXPECT_FALSE(LoadTask(f).ok());
}

TEST_F(TaskTest, SidecarHeldOutSetsAreListsOfGlobals) {
  auto py = Write("relu.py", "class Model: pass\n");
  Write("relu.anvil.json", R"({"held_out": [{"batch_size": 5}, {"batch_size": 3, "dim": 333}]})");
  auto t = LoadTask(py);
  ASSERT_TRUE(t.ok()) << t.message();
  EXPECT_EQ(t.value().held_out_json, R"([{"batch_size":5},{"batch_size":3,"dim":333}])");
  Write("relu.anvil.json", R"({"held_out": [{"get_inputs": {"use": "get_inputs_mixed"}}]})");
  ASSERT_TRUE(LoadTask(py).ok());
  for (const char* bad : {R"({"held_out": 5})", R"({"held_out": []})", R"({"held_out": [{}]})",
                          R"({"held_out": [{"batch_size": [1, 2]}]})", R"({"held_out": [{"f": {"use": 3}}]})"}) {
    Write("relu.anvil.json", bad);
    auto b = LoadTask(py);
    ASSERT_FALSE(b.ok()) << bad;
    EXPECT_NE(b.message().find("held_out must be a list of objects"), std::string::npos) << b.message();
  }
}

TEST_F(TaskTest, RejectsMissingAndNonPython) {
  EXPECT_NE(LoadTask(dir_ / "nope.py").message().find("not found"), std::string::npos);
  fs::path f = Write("task.txt", "x");
  EXPECT_NE(LoadTask(f).message().find("not a .py"), std::string::npos);
}

TEST_F(TaskTest, DiscoversTreeSortedSkippingInitAndHidden) {
  Write("level1/2_b.py", "");
  Write("level1/1_a.py", "");
  Write("level1/__init__.py", "");
  Write(".hidden/x.py", "");
  Write("level3/9_c.py", "");
  auto tasks = DiscoverTasks(dir_);
  ASSERT_TRUE(tasks.ok()) << tasks.message();
  ASSERT_EQ(tasks.value().size(), 3u);
  EXPECT_EQ(tasks.value()[0].name, "1_a");
  EXPECT_EQ(tasks.value()[1].name, "2_b");
  EXPECT_EQ(tasks.value()[2].level, 3);
}

TEST_F(TaskTest, EmptyTreeIsAnError) {
  fs::create_directories(dir_ / "empty");
  EXPECT_FALSE(DiscoverTasks(dir_ / "empty").ok());
  EXPECT_FALSE(DiscoverTasks(dir_ / "missing").ok());
}

}  // namespace
}  // namespace anvil
