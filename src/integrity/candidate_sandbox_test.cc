#include "integrity/candidate_sandbox.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "core/temp_dir_fixture.h"

namespace anvil {
namespace {

TEST(SandboxSwitchesTest, ParsesLayerSwitches) {
  SandboxPolicy p;
  auto on = ApplySandboxSwitches("-landlock,-netns", p);
  ASSERT_TRUE(on.ok()) << on.message();
  EXPECT_TRUE(on.value());
  EXPECT_FALSE(p.confine_files);
  EXPECT_FALSE(p.network_namespace);
  EXPECT_TRUE(p.forbid_syscalls);
  EXPECT_TRUE(p.user_namespace);
  SandboxPolicy q;
  EXPECT_TRUE(ApplySandboxSwitches("", q).value());
  EXPECT_TRUE(q.confine_files && q.scope_signals && q.forbid_syscalls && q.user_namespace && q.network_namespace);
  SandboxPolicy r;
  EXPECT_TRUE(ApplySandboxSwitches("-signals", r).value());
  EXPECT_TRUE(r.confine_files);
  EXPECT_FALSE(r.scope_signals);
  EXPECT_FALSE(ApplySandboxSwitches("0", q).value());
  EXPECT_FALSE(ApplySandboxSwitches("off", q).value());
  auto bad = ApplySandboxSwitches("-landlok", q);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("-landlok"), std::string::npos);
}

class PreparedAccessTest : public TempDirTest {};

TEST_F(PreparedAccessTest, CandidateReadsInputsButNeverExpectedOutputs) {
  Write("spec.json", "{}");
  Write("trial_0/inputs/tensors.json", "{}");
  Write("trial_0/expected/tensors.json", "{}");
  Write("trial_1/inputs/tensors.json", "{}");
  Write("trial_1/expected/tensors.json", "{}");
  Write("timing_0/inputs/tensors.json", "{}");
  Write("timing_0/expected/tensors.json", "{}");
  Write("seeds.json", "[]");
  auto readable = CandidateReadablePrepared(dir_);
  auto hidden = CandidateHiddenPrepared(dir_);
  auto has = [](const std::vector<std::filesystem::path>& v, const std::filesystem::path& p) {
    return std::find(v.begin(), v.end(), p) != v.end();
  };
  EXPECT_TRUE(has(readable, dir_ / "spec.json"));
  EXPECT_TRUE(has(readable, dir_ / "trial_0" / "inputs"));
  EXPECT_TRUE(has(readable, dir_ / "trial_1" / "inputs"));
  EXPECT_TRUE(has(readable, dir_ / "timing_0" / "inputs"));
  for (const auto& p : readable) {
    EXPECT_EQ(p.string().find("expected"), std::string::npos) << p;
    EXPECT_NE(p.filename(), "seeds.json");
  }
  EXPECT_EQ(hidden.size(), 3u);
  EXPECT_TRUE(has(hidden, dir_ / "trial_0" / "expected"));
  EXPECT_TRUE(has(hidden, dir_ / "timing_0" / "expected"));
  EXPECT_TRUE(CandidateReadablePrepared("").empty());
}

}  // namespace
}  // namespace anvil
