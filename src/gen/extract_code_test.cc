#include "gen/extract_code.h"

#include <gtest/gtest.h>

namespace anvil {
namespace {

ChatChoice Choice(const std::string& content, const std::string& finish = "stop") {
  ChatChoice c;
  c.content = content;
  c.finish_reason = finish;
  return c;
}

TEST(ExtractCodeTest, TakesTheBlockThatHoldsTheAnswer) {
  const std::string text =
      "Plan first.\n```cuda\n__global__ void k() {}\n```\nThen the module:\n```python\nimport torch\nclass "
      "ModelNew(torch.nn.Module):\n    pass\n```\nUsage:\n```python\nm = ModelNew()\n```\nDone.";
  const ExtractedAnswer a = ExtractAnswer(Choice(text), "kernelbench", "cuda");
  ASSERT_EQ(a.kind, AnswerKind::kCode);
  EXPECT_EQ(a.code, "import torch\nclass ModelNew(torch.nn.Module):\n    pass\n");
  EXPECT_EQ(a.format, "kernelbench");
  EXPECT_EQ(a.extension, ".py");
}

TEST(ExtractCodeTest, AnAnswerTagWinsAndTheLastBlockIsTheFallback) {
  EXPECT_EQ(ExtractAnswer(Choice("```answer\nA\n```\n```python\nB\n```"), "kernelbench", "cpu").code, "A\n");
  EXPECT_EQ(ExtractAnswer(Choice("```python\nA\n```\n```python\nB\n```"), "kernelbench", "cpu").code, "B\n");
}

TEST(ExtractCodeTest, NativeSourcesAreCppOrCudaByBackend) {
  const std::string text = "```cpp\n#include \"anvil/native.h\"\nANVIL_EXPORT int anvil_forward() { return 0; }\n```";
  ExtractedAnswer a = ExtractAnswer(Choice(text), "native", "cpu");
  EXPECT_EQ(a.format, "native");
  EXPECT_EQ(a.extension, ".cpp");
  EXPECT_EQ(ExtractAnswer(Choice(text), "native", "cuda").extension, ".cu");
  // The code's own entry point decides, whatever was asked.
  EXPECT_EQ(ExtractAnswer(Choice(text), "kernelbench", "cpu").format, "native");
}

TEST(ExtractCodeTest, AnOpenLastBlockRunsToTheEnd) {
  const ExtractedAnswer a = ExtractAnswer(Choice("```python\nclass ModelNew: pass\n"), "kernelbench", "cpu");
  EXPECT_EQ(a.kind, AnswerKind::kCode);
  EXPECT_EQ(a.code, "class ModelNew: pass\n");
}

TEST(ExtractCodeTest, TheModelsOwnFailures) {
  EXPECT_EQ(ExtractAnswer(Choice("I would use shared memory."), "kernelbench", "cpu").kind, AnswerKind::kNoCode);
  EXPECT_EQ(ExtractAnswer(Choice("```python\n\n```"), "kernelbench", "cpu").kind, AnswerKind::kNoCode);
  EXPECT_EQ(ExtractAnswer(Choice(""), "kernelbench", "cpu").kind, AnswerKind::kNoCode);
  const ExtractedAnswer cut =
      ExtractAnswer(Choice("```python\nclass ModelNew:\n    def fo", "length"), "kernelbench", "cpu");
  EXPECT_EQ(cut.kind, AnswerKind::kTruncated);
  EXPECT_EQ(cut.code, "class ModelNew:\n    def fo\n");  // Kept for the record.
  ChatChoice refused = Choice("");
  refused.refusal = "I can't help with that.";
  EXPECT_EQ(ExtractAnswer(refused, "kernelbench", "cpu").kind, AnswerKind::kRefused);
  EXPECT_EQ(ExtractAnswer(Choice("```python\nx\n```", "content_filter"), "kernelbench", "cpu").kind,
            AnswerKind::kRefused);
}

TEST(ExtractCodeTest, FencesAreLinesThatStartWithBackticks) {
  // Backticks inside a line (a Python string, a comment) neither open nor close a block.
  const std::string text = "```python\nclass ModelNew:\n    doc = 'use ``` fences'\n```\n";
  EXPECT_EQ(ExtractAnswer(Choice(text), "kernelbench", "cpu").code, "class ModelNew:\n    doc = 'use ``` fences'\n");
  // An indented fence (inside a list item) counts; CRLF line ends too.
  EXPECT_EQ(
      ExtractAnswer(Choice("1. Code:\n   ```python\r\n   class ModelNew: pass\r\n   ```\r\n"), "kernelbench", "cpu")
          .kind,
      AnswerKind::kCode);
}

}  // namespace
}  // namespace anvil
