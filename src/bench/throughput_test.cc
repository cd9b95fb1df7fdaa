#include "bench/throughput.h"

#include <gtest/gtest.h>

namespace anvil {
namespace {

TEST(RenameExtensionsTest, SuffixesTheNameOfEveryLoadInlineCall) {
  const std::string text =
      "relu = load_inline(\n    name=\"relu_ext\", cpp_sources=cpp, cuda_sources=cu,\n"
      "    functions=['relu'], verbose=False)\n"
      "gelu = load_inline(cpp_sources=[src], name = 'gelu_ext', extra_cflags=['-O3'])\n";
  int renamed = 0;
  const std::string out = RenameExtensions(text, "_b7", &renamed);
  EXPECT_EQ(renamed, 2);
  EXPECT_NE(out.find("name=\"relu_ext_b7\""), std::string::npos) << out;
  EXPECT_NE(out.find("name = 'gelu_ext_b7'"), std::string::npos) << out;
  EXPECT_NE(out.find("functions=['relu'], verbose=False)\n"), std::string::npos) << out;
}

TEST(RenameExtensionsTest, LeavesOtherNamesAndComputedNamesAlone) {
  // A `name=` outside the call, one inside a nested call or a string, and a
  // computed name are not the extension's literal name.
  const std::string text =
      "self.register_buffer(name='w', tensor=t)\n"
      "mod = load_inline(name=EXT_NAME, cpp_sources=dict(name='x')['name'], functions=[\"f(name='y')\"])\n";
  int renamed = 0;
  EXPECT_EQ(RenameExtensions(text, "_b1", &renamed), text);
  EXPECT_EQ(renamed, 0);
}

TEST(EstimatedStockSecondsTest, CountsEachUnsampledCandidateAtItsKindsMean) {
  ThroughputReport r;
  r.jobs.resize(6);
  r.cold.resize(6);
  r.stock.resize(6);
  r.stock_deadline_seconds = 120;
  // anvil found candidates 1 and 4 to hang; the sample (0, 1, 3) holds one of them.
  r.cold[1].status = r.cold[4].status = VerdictStatus::kTimeout;
  for (int i : {0, 1, 3}) r.stock[i].ran = true;
  r.stock[0].seconds = 50;
  r.stock[1].seconds = 121;
  r.stock[1].error = "timed out";
  r.stock[3].seconds = 60;
  // 50 + 121 + 55 + 60 + 121 + 55 over 6: the unsampled hang at the sampled hang's time, the rest at 55.
  auto per = EstimatedStockSeconds(r);
  ASSERT_TRUE(per.has_value());
  EXPECT_DOUBLE_EQ(*per, (50 + 121 + 55 + 60 + 121 + 55) / 6.0);
  // A sample without a hang: the unsampled hangs cost the stock path's limit.
  r.stock[1].ran = false;
  EXPECT_DOUBLE_EQ(*EstimatedStockSeconds(r), (50 + 120 + 55 + 60 + 120 + 55) / 6.0);
  // The whole set, or none of it: nothing to estimate.
  for (auto& s : r.stock) s.ran = true;
  EXPECT_FALSE(EstimatedStockSeconds(r).has_value());
  for (auto& s : r.stock) s.ran = false;
  EXPECT_FALSE(EstimatedStockSeconds(r).has_value());
}

TEST(ThroughputMarkdownTest, EachPassOfNewCandidatesHasItsRatioToTheStockPath) {
  ThroughputReport r;
  r.jobs.resize(2);
  r.cold.resize(2);
  r.steady.resize(2);
  r.fresh.resize(2);
  r.stock.resize(2);
  r.stock[0].ran = true;
  r.stock[0].seconds = 40;
  r.passes = {
      {"anvil_cold", 100, 2, 72}, {"anvil_steady", 50, 2, 144}, {"anvil_fresh", 80, 2, 90}, {"stock", 40, 1, 9}};
  const std::string md = ThroughputMarkdown(r);
  EXPECT_NE(md.find("anvil (cold) / stock: **8.0x**"), std::string::npos) << md;
  EXPECT_NE(md.find("anvil (steady: new candidates on the same tasks, prepared and timed by the cold pass) / stock: "
                    "**16.0x**"),
            std::string::npos)
      << md;
  EXPECT_NE(
      md.find("anvil (fresh: new candidates on new tasks, the machine set up by the cold pass) / stock: **10.0x**"),
      std::string::npos)
      << md;
  // The estimate over the whole set (candidate 1 unsampled, at candidate 0's 40 s): 90/h.
  EXPECT_NE(md.find("anvil (steady) / stock **1.6x**; anvil (fresh) / stock **1.0x**"), std::string::npos) << md;
  EXPECT_NE(md.find("| anvil stage (mean / max s per candidate) | cold | steady | fresh | warm |"), std::string::npos)
      << md;
  const std::string json = ThroughputJson(r);
  EXPECT_NE(json.find("\"stages_steady\""), std::string::npos);
  EXPECT_NE(json.find("\"anvil_steady\""), std::string::npos);
}

}  // namespace
}  // namespace anvil
