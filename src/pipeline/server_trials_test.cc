#include "pipeline/server_trials.h"

#include <gtest/gtest.h>

#include <cmath>

namespace anvil {
namespace {

TEST(ServerTrialsTest, ReadsTheServersComparisonsAsTrialChecks) {
  const nlohmann::json results = nlohmann::json::parse(R"([
    {"trial": 0, "problem": "", "outputs": [{"name": "out0", "dtype": "float32", "atol": 3e-4, "rtol": 1e-4,
      "ok": true, "problem": "", "elements": 16, "mismatches": 0, "nonfinite_mismatches": 0, "max_abs_error": 0.0,
      "max_rel_error": 0.0, "mean_abs_error": 0.0, "first_mismatch": -1, "first_mismatch_index": [],
      "expected_at_first": 0.0, "actual_at_first": 0.0}]},
    {"trial": 2, "problem": "nan", "outputs": [{"name": "out0", "dtype": "float32", "atol": 1e-4, "rtol": 1e-4,
      "ok": false, "problem": "nan", "elements": 16, "mismatches": 2, "nonfinite_mismatches": 2,
      "max_abs_error": "inf", "max_rel_error": 0.5, "mean_abs_error": 0.25, "first_mismatch": 5,
      "first_mismatch_index": [1, 1], "expected_at_first": 1.5, "actual_at_first": "nan"}]},
    {"trial": 3, "problem": "shape: out0 is [8] where the reference's is [16]"},
    {"trial": 4, "problem": "output count: 2 outputs where the reference has 1"},
    {"trial": 9, "problem": ""}
  ])");
  const std::vector<TrialCheck> checks = TrialChecksFromServer(results, 5);
  ASSERT_EQ(checks.size(), 5u);
  EXPECT_TRUE(checks[0].ok);
  EXPECT_EQ(checks[0].outputs[0].tolerance.atol, 3e-4);
  EXPECT_EQ(checks[0].outputs[0].result.elements, 16);
  // Trial 1 never came back: missing, as a trial folder never written.
  EXPECT_FALSE(checks[1].ok);
  EXPECT_EQ(checks[1].problem, "missing");
  const CompareResult& r = checks[2].outputs[0].result;
  EXPECT_FALSE(checks[2].ok);
  EXPECT_EQ(checks[2].problem, "nan");
  EXPECT_TRUE(std::isinf(r.max_abs_error));
  EXPECT_TRUE(std::isnan(r.actual_at_first));
  EXPECT_EQ(r.first_mismatch_index, (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(checks[3].problem, "shape");
  ASSERT_EQ(checks[3].outputs.size(), 1u);
  EXPECT_EQ(checks[3].outputs[0].name, "out0");
  EXPECT_EQ(checks[3].outputs[0].result.problem, "shape");
  EXPECT_EQ(checks[4].problem, "output count");
  EXPECT_TRUE(checks[4].outputs.empty());
}

TEST(ServerTrialsTest, WhatItCannotReadNeverPasses) {
  for (const char* text : {R"([{"trial": 0, "outputs": [{}]}])", R"([{"trial": 0, "outputs": [7]}])",
                           R"([{"trial": 0}])", R"([{"trial": "0", "outputs": []}])", R"({"trial": 0})", "[]"}) {
    const std::vector<TrialCheck> checks = TrialChecksFromServer(nlohmann::json::parse(text), 1);
    ASSERT_EQ(checks.size(), 1u) << text;
    EXPECT_FALSE(checks[0].ok) << text;
    EXPECT_FALSE(checks[0].problem.empty()) << text;
  }
}

}  // namespace
}  // namespace anvil
