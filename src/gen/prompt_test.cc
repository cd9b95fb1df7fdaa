#include "gen/prompt.h"

#include <gtest/gtest.h>

#include "core/temp_dir_fixture.h"

namespace anvil {
namespace {

TEST(PromptTest, FillsEachFieldOnceAndRefusesUnknownOnes) {
  auto filled = FillTemplate("a {{x}} b {{y}}", {{"x", "{{y}} and {braces}"}, {"y", "Y"}});
  ASSERT_TRUE(filled.ok()) << filled.message();
  EXPECT_EQ(filled.value(), "a {{y}} and {braces} b Y");
  auto unknown = FillTemplate("{{typo}}", {{"x", ""}});
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.message().find("{{typo}}"), std::string::npos);
  EXPECT_EQ(FillTemplate("no fields {{ open", {}).value(), "no fields {{ open");
}

TEST(PromptTest, TheBundledOneShotPromptHasEveryVariant) {
  auto p = LoadPrompt(kDefaultPromptId);
  ASSERT_TRUE(p.ok()) << p.message();
  EXPECT_EQ(p.value().version, 1);
  const std::string reference = "class Model(nn.Module):\n    def forward(self, x): return x * {'a': 1}['a']\n";
  for (const char* backend : {"cpu", "cuda"}) {
    for (const char* format : {"kernelbench", "native"}) {
      auto m = FirstTurnMessages(p.value(), reference, backend, format);
      ASSERT_TRUE(m.ok()) << backend << "/" << format << ": " << m.message();
      ASSERT_EQ(m.value().size(), 2u);
      EXPECT_EQ(m.value()[0].role, "system");
      const std::string& user = m.value()[1].content;
      EXPECT_NE(user.find(reference.substr(0, reference.size() - 1)), std::string::npos);
      EXPECT_EQ(user.find("{{"), std::string::npos) << user;
      EXPECT_NE(user.find(std::string(format) == "native" ? "anvil_forward" : "class ModelNew"), std::string::npos);
    }
  }
  EXPECT_FALSE(FirstTurnMessages(p.value(), reference, "musa", "native").ok());
}

TEST(PromptTest, TheMusacoderPromptShowsTheSpec) {
  auto p = LoadPrompt("musacoder");
  ASSERT_TRUE(p.ok()) << p.message();
  EXPECT_TRUE(p.value().needs_spec);
  EXPECT_FALSE(LoadPrompt(kDefaultPromptId).value().needs_spec);
  // Without the spec's fields it cannot be filled: a prompt never goes out with a hole in it.
  EXPECT_FALSE(FirstTurnMessages(p.value(), "class Model: pass", "cuda", "kernelbench").ok());
  auto m = FirstTurnMessages(p.value(), "class Model: pass", "cuda", "kernelbench",
                             {{"tensor_metadata", "in0: float32 [4096, 4096]"}, {"op_trace", "aten.mm.default"}});
  ASSERT_TRUE(m.ok()) << m.message();
  const std::string& user = m.value().back().content;
  EXPECT_NE(user.find("in0: float32 [4096, 4096]"), std::string::npos);
  EXPECT_NE(user.find("aten.mm.default"), std::string::npos);
  EXPECT_NE(user.find("NVIDIA GPU (CUDA)"), std::string::npos);
  EXPECT_NE(user.find("6. Correctness"), std::string::npos);
  EXPECT_NE(user.find("class ModelNew"), std::string::npos);
}

class PromptFilesTest : public TempDirTest {};

TEST_F(PromptFilesTest, ABrokenPromptFolderIsNamed) {
  auto missing = LoadPrompt("nope", dir_);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.message().find("no prompt 'nope'"), std::string::npos);
  Write("p/prompt.json", R"({"id": "other", "version": 1})");
  EXPECT_NE(LoadPrompt("p", dir_).message().find("not its folder's name"), std::string::npos);
  Write("p/prompt.json", R"({"id": "p", "version": 1, "user": "gone.md"})");
  EXPECT_NE(LoadPrompt("p", dir_).message().find("gone.md"), std::string::npos);
  EXPECT_FALSE(LoadPrompt("../p", dir_).ok());
}

}  // namespace
}  // namespace anvil
