#include "integrity/symbol_scan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/subprocess.h"
#include "core/temp_dir_fixture.h"

namespace anvil {
namespace {

bool Has(const std::vector<RuleHit>& hits, const std::string& rule, const std::string& severity) {
  return std::any_of(hits.begin(), hits.end(),
                     [&](const RuleHit& h) { return h.rule == rule && h.severity == severity; });
}

TEST(ScanSymbolsTest, VendorLibrariesAndAtenComputeAreCheats) {
  auto hits = ScanSymbols({"cublasSgemm_v2", "at::_ops::matmul::call(at::Tensor const&, at::Tensor const&)",
                           "at::_ops::add_Tensor::call(at::Tensor const&)", "sgemm_"},
                          "ext.so", true);
  ASSERT_EQ(hits.size(), 4u);
  EXPECT_EQ(hits[0].rule, "so.vendor_library");
  EXPECT_EQ(hits[1].rule, "so.aten_compute");
  EXPECT_EQ(hits[1].severity, "cheat");
  EXPECT_NE(hits[2].message.find("(add)"), std::string::npos) << hits[2].message;
  EXPECT_EQ(hits[3].rule, "so.vendor_library");
  EXPECT_EQ(hits[0].source, "ext.so");
}

TEST(ScanSymbolsTest, AllocationAndViewsAreOnlyEvidence) {
  auto hits = ScanSymbols({"at::_ops::empty_like::call(at::Tensor const&)",
                           "at::_ops::empty_memory_format::call(c10::ArrayRef<c10::SymInt>)",
                           "at::_ops::copy_::call(at::Tensor&)", "at::_ops::to_dtype::call(at::Tensor const&)",
                           "c10::detail::torchCheckFail(char const*)", "omp_get_thread_num", "malloc"},
                          "ext.so", true);
  for (const auto& h : hits) EXPECT_EQ(h.severity, "evidence") << h.rule << " " << h.excerpt;
  EXPECT_EQ(hits.size(), 4u);
}

TEST(ScanSymbolsTest, LibcLevelRulesOnlyWhereTheRuntimeIsDynamic) {
  const std::vector<std::string> syms = {"pthread_create", "fork", "dlsym", "cudaStreamCreateWithFlags"};
  auto hits = ScanSymbols(syms, "k.so", true);
  EXPECT_TRUE(Has(hits, "so.thread", "cheat"));
  EXPECT_TRUE(Has(hits, "so.process", "cheat"));
  EXPECT_TRUE(Has(hits, "so.native_tamper", "cheat"));
  EXPECT_TRUE(Has(hits, "so.stream_create", "evidence"));
  // nvcc links cudart statically, and cudart itself needs threads and dlopen.
  EXPECT_TRUE(ScanSymbols(syms, "k.so", false).empty());
}

TEST(ScanSymbolsTest, RunningPythonIsACheatAndANativeLibraryMayNotTouchPythonAtAll) {
  // What a pybind11 extension imports is fine; running Python code is not.
  const std::vector<std::string> pybind = {"PyObject_GetAttrString", "PyEval_SaveThread", "_Py_Dealloc"};
  EXPECT_TRUE(ScanSymbols(pybind, "ext.so", true).empty());
  EXPECT_TRUE(Has(ScanSymbols({"PyRun_SimpleString"}, "ext.so", true), "so.python_api", "cheat"));
  EXPECT_TRUE(Has(ScanSymbols({"PyImport_ImportModule"}, "ext.so", false), "so.python_api", "cheat"));
  // The native ABI is plain C: any Python symbol means the candidate reaches into the worker.
  EXPECT_TRUE(Has(ScanSymbols(pybind, "libcandidate.so", false, /*native=*/true), "so.python_api", "cheat"));
}

class SymbolFileTest : public TempDirTest {};

TEST_F(SymbolFileTest, TokenPastedLibraryCallShowsUpInTheBuiltObject) {
  // The source never spells cblas_sgemm: the preprocessor pastes it together.
  auto src = Write("k.cpp",
                   "#define CAT(a, b) a##b\n"
                   "extern \"C\" void CAT(cblas_, sgemm)(int, int, int);\n"
                   "extern \"C\" int anvil_forward() { CAT(cblas_, sgemm)(1, 2, 3); return 0; }\n");
  ProcessSpec cc;
  cc.argv = {"g++", "-shared", "-fPIC", "-o", (dir_ / "k.so").string(), src.string()};
  auto built = RunProcess(cc);
  ASSERT_TRUE(built.ok() && built.value().Succeeded()) << (built.ok() ? built.value().err : built.message());
  auto syms = UndefinedSymbols(dir_ / "k.so");
  ASSERT_TRUE(syms.ok()) << syms.message();
  EXPECT_NE(std::find(syms.value().begin(), syms.value().end(), "cblas_sgemm"), syms.value().end());
  EXPECT_TRUE(Has(ScanSymbols(syms.value(), "k.so", true), "so.vendor_library", "cheat"));
  EXPECT_FALSE(UndefinedSymbols(dir_ / "missing.so").ok());
}

TEST_F(SymbolFileTest, DefinedFunctionsNameTheBuildsOwnFunctionsAlsoStaticOnes) {
  auto src = Write("k.cpp",
                   "void add_kernel(const float*, float*, int) {}\n"
                   "static void hidden_kernel(float*) {}\n"
                   "extern \"C\" void plain(float* x) { hidden_kernel(x); }\n");
  ProcessSpec cc;
  cc.argv = {"g++", "-shared", "-fPIC", "-O0", "-o", (dir_ / "k.so").string(), src.string()};
  auto built = RunProcess(cc);
  ASSERT_TRUE(built.ok() && built.value().Succeeded()) << (built.ok() ? built.value().err : built.message());
  auto defined = DefinedFunctions(dir_ / "k.so");
  ASSERT_TRUE(defined.ok()) << defined.message();
  auto has = [&](const std::string& name) {
    return std::find(defined.value().begin(), defined.value().end(), name) != defined.value().end();
  };
  EXPECT_TRUE(has("_Z10add_kernelPKfPfi"));
  EXPECT_TRUE(has("_ZL13hidden_kernelPf"));
  EXPECT_TRUE(has("plain"));
  EXPECT_FALSE(has("malloc"));
  EXPECT_FALSE(DefinedFunctions(dir_ / "missing.so").ok());
}

}  // namespace
}  // namespace anvil
