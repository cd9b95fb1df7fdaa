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

TEST_F(PreparedAccessTest, CandidateReadsTheSpecAndNothingElse) {
  Write("spec.json", "{}");
  Write("state_dict.pt", "weights");  // As folders held them once: hidden now.
  Write("params/tensors.json", "{}");
  for (const char* secret : {"kept_seeds.json", "kept_timing_seeds.json", "kept_held_out_sets.json", "seeds.json"}) {
    Write(secret, "[\"1\"]");
  }
  auto readable = CandidateReadablePrepared(dir_);
  std::sort(readable.begin(), readable.end());
  EXPECT_EQ(readable, (std::vector<std::filesystem::path>{dir_ / "spec.json"}));
  auto hidden = CandidateHiddenPrepared(dir_);
  std::sort(hidden.begin(), hidden.end());
  EXPECT_EQ(hidden, (std::vector<std::filesystem::path>{dir_ / "kept_held_out_sets.json", dir_ / "kept_seeds.json",
                                                        dir_ / "kept_timing_seeds.json", dir_ / "params",
                                                        dir_ / "seeds.json", dir_ / "state_dict.pt"}));
  EXPECT_TRUE(CandidateReadablePrepared("").empty());
  EXPECT_TRUE(CandidateHiddenPrepared("").empty());
}

}  // namespace
}  // namespace anvil
