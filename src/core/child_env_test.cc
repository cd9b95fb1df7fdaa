#include "core/child_env.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string>

#include "core/subprocess.h"

namespace anvil {
namespace {

// Sets a variable of this process for one test and restores it after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name); old != nullptr) old_ = old;
    setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (old_.has_value()) {
      setenv(name_.c_str(), old_->c_str(), 1);
    } else {
      unsetenv(name_.c_str());
    }
  }

 private:
  std::string name_;
  std::optional<std::string> old_;
};

bool Holds(const EnvPairs& env, const std::string& name) {
  for (const auto& [k, v] : env) {
    if (k == name) return true;
  }
  return false;
}

TEST(ChildEnvTest, WhatToolchainsPythonAndCudaNeedPasses) {
  for (const char* name :
       {"PATH", "HOME", "LANG", "LC_ALL", "LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES", "CUDA_HOME", "NVCC_APPEND_FLAGS",
        "OMP_NUM_THREADS", "MKL_NUM_THREADS", "TORCH_CUDA_ARCH_LIST", "PYTORCH_CUDA_ALLOC_CONF",
        "TORCHINDUCTOR_COMPILE_THREADS", "ANVIL_SANDBOX", "ANVIL_STATIC_VERDICTS", "VIRTUAL_ENV", "MAX_JOBS"}) {
    EXPECT_TRUE(ChildMayInherit(name)) << name;
  }
}

TEST(ChildEnvTest, AnythingElseAndEverySecretStaysBehind) {
  for (const char* name :
       {"OPENAI_API_KEY", "ANVIL_OPENAI_API_KEY", "HF_TOKEN", "AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN",
        "TORCH_HUB_TOKEN", "CUDA_AUTH", "ANVIL_PASSWORD", "anvil_api_key", "DATABASE_URL", "ANVIL_OPENAI_BASE_URL",
        "LD_PRELOAD", "PYTHONSTARTUP", "SSH_AUTH_SOCK", "CUDA_", "ANVIL_", ""}) {
    EXPECT_FALSE(ChildMayInherit(name)) << name;
  }
}

TEST(ChildEnvTest, KeepsTheAllowedPartAndWhatTheCallerAdds) {
  ScopedEnv key("OPENAI_API_KEY", "sk-child-env-test");
  ScopedEnv other("ANVIL_CHILD_ENV_TEST_SWITCH", "kept");  // ANVIL_*: anvil's own switches.
  ScopedEnv stranger("SOME_SERVICE_URL", "dropped");
  ScopedEnv threads("OMP_NUM_THREADS", "3");
  const EnvPairs env = ChildEnvironment({{"PYTHONPATH", "/x"}, {"OMP_NUM_THREADS", "1"}, {"A_TOKEN", "chosen"}});
  EXPECT_FALSE(Holds(env, "OPENAI_API_KEY"));
  EXPECT_FALSE(Holds(env, "SOME_SERVICE_URL"));
  EXPECT_TRUE(Holds(env, "ANVIL_CHILD_ENV_TEST_SWITCH"));
  EXPECT_TRUE(Holds(env, "PYTHONPATH"));
  EXPECT_TRUE(Holds(env, "A_TOKEN"));  // The caller's own choice is kept.
  int omp = 0;
  for (const auto& [k, v] : env) {
    if (k == "OMP_NUM_THREADS") {
      ++omp;
      EXPECT_EQ(v, "1");  // Added entries replace inherited ones.
    }
  }
  EXPECT_EQ(omp, 1);
  EXPECT_TRUE(std::is_sorted(env.begin(), env.end()));
}

TEST(ChildEnvTest, AChildProcessSeesNoSecretOfAnvils) {
  ScopedEnv key("OPENAI_API_KEY", "sk-child-env-test-secret");
  ScopedEnv anvil_key("ANVIL_OPENAI_API_KEY", "sk-child-env-test-secret");
  ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c", "env; cat /proc/self/environ | tr '\\0' '\\n'"};
  spec.env = {{"ADDED_BY_CALLER", "yes"}};
  auto r = RunProcess(spec);
  ASSERT_TRUE(r.ok()) << r.message();
  ASSERT_TRUE(r.value().Succeeded()) << r.value().Describe() << r.value().err;
  EXPECT_EQ(r.value().out.find("sk-child-env-test-secret"), std::string::npos) << r.value().out;
  EXPECT_NE(r.value().out.find("ADDED_BY_CALLER=yes"), std::string::npos) << r.value().out;
  EXPECT_NE(r.value().out.find("PATH="), std::string::npos) << r.value().out;
}

}  // namespace
}  // namespace anvil
