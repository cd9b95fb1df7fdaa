#include "pipeline/verdict_cache.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/temp_dir_fixture.h"

namespace anvil {
namespace {

class VerdictCacheTest : public TempDirTest {};

VerdictKeyParts Parts() {
  return {"task-sha", "kernelbench", "class ModelNew: ...", "{\"trials\":5}", "cpu", "x86", "2.11.0"};
}

TEST(VerdictCacheKeyTest, EveryPartChangesTheKey) {
  const std::string base = VerdictCacheKey(Parts());
  EXPECT_EQ(VerdictCacheKey(Parts()), base);
  for (int i = 0; i < 7; ++i) {
    VerdictKeyParts p = Parts();
    std::string* fields[] = {&p.task_sha256, &p.format,       &p.candidate_text, &p.options,
                             &p.backend,     &p.device_model, &p.torch_version};
    *fields[i] += "x";
    EXPECT_NE(VerdictCacheKey(p), base) << i;
  }
  // Parts are length-prefixed: moving a character across a boundary is another key.
  VerdictKeyParts a = Parts(), b = Parts();
  a.backend = "cp";
  a.device_model = "ux86";
  b.backend = "cpu";
  b.device_model = "x86";
  EXPECT_NE(VerdictCacheKey(a), VerdictCacheKey(b));
}

TEST(VerdictCacheKeyTest, OptionsThatChangeAVerdictChangeTheFingerprint) {
  EvalOptions o;
  const std::string base = VerdictOptionsFingerprint(o);
  EvalOptions trials = o;
  trials.trials = 3;
  EvalOptions perf = o;
  perf.perf = false;
  EvalOptions atol = o;
  atol.atol = 1e-3;
  EvalOptions policy = o;
  policy.policy.name = "kernelbench";
  EvalOptions policy_version = o;
  policy_version.policy.version = 2;
  for (const EvalOptions& changed : {trials, perf, atol, policy, policy_version})
    EXPECT_NE(VerdictOptionsFingerprint(changed), base);
  EvalOptions cache = o;
  cache.cache_dir = "/elsewhere";  // Where the cache is does not change a verdict.
  EXPECT_EQ(VerdictOptionsFingerprint(cache), base);
}

TEST_F(VerdictCacheTest, KeepsWhatMayBeKeptAndSaysItCameFromThere) {
  VerdictCache cache(dir_);
  const std::string key = VerdictCacheKey(Parts());
  EXPECT_FALSE(cache.Lookup(key, "/new/path.py").has_value());
  const std::string verdict =
      R"({"status": "pass", "reward": 1.0, "candidate": {"path": "/old.py", "format": "kernelbench"}})";
  ASSERT_TRUE(cache.Store(key, verdict).ok());
  auto hit = cache.Lookup(key, "/new/path.py");
  ASSERT_TRUE(hit.has_value());
  const auto j = nlohmann::json::parse(*hit);
  EXPECT_EQ(j["cached"], true);
  EXPECT_EQ(j["candidate"]["path"], "/new/path.py");
  EXPECT_EQ(j["reward"], 1.0);
  EXPECT_FALSE(VerdictCacheable("infra_error"));
  EXPECT_FALSE(VerdictCacheable("timeout"));
  EXPECT_TRUE(VerdictCacheable("wrong_answer"));
  // An entry that is not a verdict, or one that should never have been kept, is a miss.
  ASSERT_TRUE(cache.Store("broken", "not json").ok());
  EXPECT_FALSE(cache.Lookup("broken", "/p").has_value());
  ASSERT_TRUE(cache.Store("infra", R"({"status": "infra_error"})").ok());
  EXPECT_FALSE(cache.Lookup("infra", "/p").has_value());
}

}  // namespace
}  // namespace anvil
