#include "service/service_metrics.h"

#include <gtest/gtest.h>

namespace anvil {
namespace {

bool Has(const std::string& text, const std::string& line) { return text.find(line + "\n") != std::string::npos; }

TEST(HistogramTest, BucketsAreCumulativeWithInfSumAndCount) {
  Histogram h({0.1, 1});
  h.Observe(0.05);
  h.Observe(0.5);
  h.Observe(0.5);
  h.Observe(7);
  std::string out;
  h.Render("x_seconds", "stage=\"compile\"", out);
  EXPECT_TRUE(Has(out, "x_seconds_bucket{stage=\"compile\",le=\"0.1\"} 1")) << out;
  EXPECT_TRUE(Has(out, "x_seconds_bucket{stage=\"compile\",le=\"1\"} 3")) << out;
  EXPECT_TRUE(Has(out, "x_seconds_bucket{stage=\"compile\",le=\"+Inf\"} 4")) << out;
  EXPECT_TRUE(Has(out, "x_seconds_sum{stage=\"compile\"} 8.05")) << out;
  EXPECT_TRUE(Has(out, "x_seconds_count{stage=\"compile\"} 4")) << out;
}

TEST(HistogramTest, AValueOnABoundIsInThatBucket) {
  Histogram h({1});
  h.Observe(1);
  std::string out;
  h.Render("h", "", out);
  EXPECT_TRUE(Has(out, "h_bucket{le=\"1\"} 1")) << out;
  EXPECT_TRUE(Has(out, "h_count 1")) << out;
}

TEST(ServiceMetricsTest, VerdictsByStatusRequestsAndLoad) {
  ServiceMetrics m;
  Verdict pass;
  pass.status = VerdictStatus::kPass;
  pass.seconds = 2;
  pass.stage_seconds["compile"] = 1.5;
  Verdict timeout;
  timeout.status = VerdictStatus::kTimeout;
  m.CountVerdict(pass);
  m.CountVerdict(pass);
  m.CountVerdict(timeout);
  m.CountRequest("/v1/evaluate", 200, 0.004);
  m.CountRequest("/v1/evaluate", 429, 0.0001);
  ServiceLoad load;
  load.queued = 3;
  load.evaluating = 2;
  load.lanes.compiles = 1;
  load.lanes.compile_slots = 4;
  const std::string text = m.Render(load, 5);
  EXPECT_TRUE(Has(text, "anvil_verdicts_total{status=\"pass\"} 2")) << text;
  EXPECT_TRUE(Has(text, "anvil_verdicts_total{status=\"timeout\"} 1")) << text;
  EXPECT_TRUE(Has(text, "anvil_verdicts_total{status=\"infra_error\"} 0")) << text;  // Every status, from the start.
  EXPECT_TRUE(Has(text, "anvil_jobs{state=\"queued\"} 3")) << text;
  EXPECT_TRUE(Has(text, "anvil_jobs{state=\"running\"} 2")) << text;
  EXPECT_TRUE(Has(text, "anvil_sync_requests_waiting 5")) << text;
  EXPECT_TRUE(Has(text, "anvil_slots_in_use{kind=\"compile\"} 1")) << text;
  EXPECT_TRUE(Has(text, "anvil_slots{kind=\"compile\"} 4")) << text;
  EXPECT_TRUE(Has(text, "anvil_stage_seconds_count{stage=\"compile\"} 2")) << text;
  EXPECT_TRUE(Has(text, "anvil_stage_seconds_count{stage=\"verdict\"} 3")) << text;
  EXPECT_TRUE(Has(text, "anvil_http_requests_total{route=\"/v1/evaluate\",code=\"429\"} 1")) << text;
  EXPECT_TRUE(Has(text, "anvil_http_request_seconds_bucket{route=\"/v1/evaluate\",le=\"0.005\"} 2")) << text;
  EXPECT_TRUE(Has(text, "# TYPE anvil_stage_seconds histogram")) << text;
}

}  // namespace
}  // namespace anvil
