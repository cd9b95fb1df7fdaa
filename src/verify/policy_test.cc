#include "verify/policy.h"

#include <gtest/gtest.h>

namespace anvil {
namespace {

TEST(PolicyTest, TheDefaultIsMusaCoderOneAndEveryNameResolves) {
  EXPECT_EQ(Policy().Id(), "musacoder/1");
  for (const std::string& name : PolicyNames()) {
    auto p = PolicyNamed(name);
    ASSERT_TRUE(p.ok()) << name;
    EXPECT_EQ(p.value().name, name);
    EXPECT_EQ(p.value().version, 1);
  }
  auto unknown = PolicyNamed("kernelbench-v9");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.message().find("musacoder, kernelbench or kernelbench-v0.1"), std::string::npos);
}

TEST(PolicyTest, KernelBenchAllowsTorchComputeAndVendorLibrariesOnly) {
  const Policy kb = PolicyNamed("kernelbench").value();
  const Policy v01 = PolicyNamed("kernelbench-v0.1").value();
  for (const char* rule : {"py.torch_compute", "run.aten_compute", "cpp.aten_compute", "so.aten_compute",
                           "cpp.vendor_library", "so.vendor_library", "trace.vendor_kernel", "trace.foreign_time"}) {
    EXPECT_TRUE(kb.Allows(rule)) << rule;
    EXPECT_TRUE(v01.Allows(rule)) << rule;
    EXPECT_FALSE(Policy().Allows(rule)) << rule;
  }
  // The sandbox, timing and anvil's other integrity rules hold under every policy.
  for (const char* rule : {"py.reference_model", "py.no_extension", "run.tamper", "perf.recheck", "perf.clock",
                           "sandbox.forbidden_syscall", "run.host_compute", "kb.code_bypass"}) {
    EXPECT_FALSE(kb.Allows(rule)) << rule;
  }
  EXPECT_TRUE(kb.kernelbench_static);
  EXPECT_FALSE(v01.kernelbench_static);
  EXPECT_TRUE(kb.reference_tf32 && v01.reference_tf32 && !Policy().reference_tf32);
  EXPECT_FALSE(kb.nan_equal);
  // The trivial-output guard is musacoder's: KernelBench's harness has none.
  EXPECT_TRUE(Policy().trivial_guard);
  EXPECT_FALSE(kb.trivial_guard || v01.trivial_guard);
}

}  // namespace
}  // namespace anvil
