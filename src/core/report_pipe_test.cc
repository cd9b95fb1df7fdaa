#include "core/report_pipe.h"

#include <gtest/gtest.h>

#include <string>

namespace anvil {
namespace {

// 20000 lines (about 200 KB, more than a pipe holds): the child never blocks, and every line arrives in order.
TEST(ReportPipeTest, TheParentDrainsWhileTheChildWritesAndKeepsEveryLine) {
  ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c", "fd=$1; i=0; while [ $i -lt 20000 ]; do echo \"line $i\" >&$fd; i=$((i+1)); done",
               "sh"};
  spec.deadline = std::chrono::seconds(60);
  ReportPipe report;
  ASSERT_TRUE(report.Attach(spec, "--unused").ok());
  spec.argv.erase(spec.argv.end() - 2);  // Keep the number only: the script's $1.
  auto r = RunProcess(spec);
  report.Finish();
  ASSERT_TRUE(r.ok() && r.value().Succeeded()) << (r.ok() ? r.value().err : r.message());
  const auto lines = report.Lines();
  ASSERT_EQ(lines.size(), 20000u);
  EXPECT_EQ(lines.front(), "line 0");
  EXPECT_EQ(lines.back(), "line 19999");
  EXPECT_FALSE(report.overflowed());
}

TEST(ReportPipeTest, AFloodIsCappedAndSaidSo) {
  ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c", "head -c 20000000 /dev/zero | tr '\\0' 'x' >&$1", "sh"};
  spec.deadline = std::chrono::seconds(60);
  ReportPipe report;
  ASSERT_TRUE(report.Attach(spec, "--unused").ok());
  spec.argv.erase(spec.argv.end() - 2);
  auto r = RunProcess(spec);
  report.Finish();
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(report.overflowed());
}

}  // namespace
}  // namespace anvil
