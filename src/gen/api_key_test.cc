#include "gen/api_key.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include "core/temp_dir_fixture.h"

namespace anvil {
namespace {

namespace fs = std::filesystem;

class ApiKeyTest : public TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    unsetenv("ANVIL_OPENAI_API_KEY");
    unsetenv("OPENAI_API_KEY");
  }
  void TearDown() override {
    unsetenv("ANVIL_OPENAI_API_KEY");
    unsetenv("OPENAI_API_KEY");
    TempDirTest::TearDown();
  }
};

TEST_F(ApiKeyTest, NoKeyIsFine) {
  auto k = ResolveApiKey("", {});
  ASSERT_TRUE(k.ok());
  EXPECT_EQ(k.value().value, "");
  EXPECT_EQ(k.value().source, "none");
}

TEST_F(ApiKeyTest, TheFileThenAnvilsVariableThenOpenAis) {
  setenv("OPENAI_API_KEY", "sk-openai", 1);
  EXPECT_EQ(ResolveApiKey("", {}).value().value, "sk-openai");
  setenv("ANVIL_OPENAI_API_KEY", "sk-anvil", 1);
  EXPECT_EQ(ResolveApiKey("", {}).value().source, "ANVIL_OPENAI_API_KEY");
  const fs::path file = Write("private/key", "  sk-file\n");
  auto k = ResolveApiKey(file.string(), {});
  ASSERT_TRUE(k.ok()) << k.message();
  EXPECT_EQ(k.value().value, "sk-file");
}

TEST_F(ApiKeyTest, RefusesAFileCandidateCodeCouldRead) {
  const fs::path file = Write("shared/sub/key", "sk-file");
  auto k = ResolveApiKey(file.string(), {"/usr", dir_ / "shared"});
  ASSERT_FALSE(k.ok());
  EXPECT_NE(k.message().find("candidate code may read"), std::string::npos) << k.message();
  EXPECT_EQ(k.message().find("sk-file"), std::string::npos);
  // A sibling folder whose name starts the same is not inside it.
  const fs::path sibling = Write("shared-not/key", "sk-file");
  EXPECT_TRUE(ResolveApiKey(sibling.string(), {dir_ / "shared"}).ok());
  // Nor through a symbolic link into it.
  fs::create_symlink(file, dir_ / "link");
  EXPECT_FALSE(ResolveApiKey((dir_ / "link").string(), {dir_ / "shared"}).ok());
}

TEST_F(ApiKeyTest, AMissingEmptyOrManyLinedFileIsNamed) {
  EXPECT_NE(ResolveApiKey((dir_ / "none").string(), {}).message().find("--api-key-file"), std::string::npos);
  EXPECT_NE(ResolveApiKey(Write("empty", " \n").string(), {}).message().find("empty"), std::string::npos);
  EXPECT_NE(ResolveApiKey(Write("two", "a\nb\n").string(), {}).message().find("more than one line"), std::string::npos);
}

}  // namespace
}  // namespace anvil
