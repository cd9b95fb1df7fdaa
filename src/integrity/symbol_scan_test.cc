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

// Red-team sweep 2 (issue 4): what a native candidate reached without a listed name.
TEST(ScanSymbolsTest, HiddenThreadsSignalsLoaderWalksAndBlasSpellingsAreCheats) {
  for (const char* thread : {"clone", "__clone", "timer_create", "GOMP_parallel_start", "mq_notify"}) {
    EXPECT_TRUE(Has(ScanSymbols({thread}, "k.so", true), "so.thread", "cheat")) << thread;
  }
  for (const char* handler : {"sigaction", "signal", "setitimer", "alarm", "timer_settime"}) {
    EXPECT_TRUE(Has(ScanSymbols({handler}, "k.so", true), "so.signal", "cheat")) << handler;
  }
  for (const char* walk : {"_r_debug", "getauxval", "dladdr1", "__libc_dlsym"}) {
    EXPECT_TRUE(Has(ScanSymbols({walk}, "k.so", true), "so.native_tamper", "cheat")) << walk;
  }
  // MKL's Fortran BLAS as libtorch_cpu exports it, every spelling; ATen's own BLAS.
  for (const char* blas :
       {"SGEMM", "sgemm", "SGEMM_", "dgemv_", "isamax_", "SAXPY", "at::native::cpublas::gemm(char)"}) {
    EXPECT_TRUE(Has(ScanSymbols({blas}, "ext.so", false), "so.vendor_library", "cheat")) << blas;
  }
  for (const char* other : {"strcpy", "sscanf", "dcgettext", "scalbn", "memcpy", "sgemmm"}) {
    EXPECT_TRUE(ScanSymbols({other}, "ext.so", true).empty()) << other;
  }
}

TEST(ScanSymbolsTest, AtenKernelsCalledPastTheDispatcherAreCompute) {
  // at::cpu::mm runs the CPU kernel with no dispatch (no aten trace sees it).
  auto hits = ScanSymbols({"at::cpu::mm(at::Tensor const&, at::Tensor const&)", "at::native::relu(at::Tensor const&)",
                           "at::cuda::getCurrentCUDAStream(signed char)"},
                          "ext.so", false);
  ASSERT_EQ(hits.size(), 3u);
  EXPECT_EQ(hits[0].severity, "cheat");
  EXPECT_EQ(hits[1].severity, "cheat");
  EXPECT_EQ(hits[2].severity, "evidence");  // Not compute: the stream to launch on.
}

TEST(ScanSymbolsTest, ReachingTheInterpretersFramesIsACheatForAnExtension) {
  for (const char* frame : {"PyEval_GetFrame", "PyThreadState_GetFrame", "PyFrame_GetLocals", "PySys_GetObject"}) {
    EXPECT_TRUE(Has(ScanSymbols({frame}, "ext.so", false), "so.python_api", "cheat")) << frame;
  }
  // pybind11's own error handling walks frames it is handed: not a cheat.
  EXPECT_TRUE(ScanSymbols({"PyFrame_GetBack", "PyFrame_GetCode", "PyEval_GetBuiltins"}, "ext.so", true).empty());
}

class SymbolFileTest : public TempDirTest {
 protected:
  // `source` built by g++ into k.so of the test's folder; false (and the
  // compiler's message as a test failure) when it did not build.
  bool BuildShared(const std::string& source) {
    ProcessSpec cc;
    cc.argv = {"g++", "-shared", "-fPIC", "-O0", "-o", (dir_ / "k.so").string(), Write("k.cpp", source).string()};
    auto built = RunProcess(cc);
    EXPECT_TRUE(built.ok() && built.value().Succeeded()) << (built.ok() ? built.value().err : built.message());
    return built.ok() && built.value().Succeeded();
  }
};

// `asm("pthread_create") __attribute__((weak))`: no name in the source, a weak reference in the library.
TEST_F(SymbolFileTest, AWeakReferenceUnderAnAsmLabelIsStillTheCallItNames) {
  const char* src =
      "extern \"C\" int start(void*, const void*, void* (*)(void*), void*) asm(\"pthread_create\")\n"
      "    __attribute__((weak));\n"
      "static void* work(void*) { return nullptr; }\n"
      "extern \"C\" int anvil_forward() { void* t; return start ? start(&t, nullptr, work, nullptr) : 1; }\n";
  ASSERT_TRUE(BuildShared(src));
  auto syms = UndefinedSymbols(dir_ / "k.so");
  ASSERT_TRUE(syms.ok()) << syms.message();
  EXPECT_TRUE(Has(ScanSymbols(syms.value(), "k.so", true), "so.thread", "cheat"));
}

// nvcc links cudart statically: the library's own calls hide the candidate's, its object before the link does not.
TEST_F(SymbolFileTest, AnArtifactsPrelinkObjectIsScannedWithEveryRule) {
  auto src =
      Write("k.cpp", "#include <pthread.h>\nextern \"C\" int f(pthread_t* t) { return pthread_create(t, 0, 0, 0); }\n");
  ProcessSpec cc;
  cc.argv = {"g++", "-c", "-fPIC", "-o", (dir_ / kPrelinkObject).string(), src.string()};
  ASSERT_TRUE(RunProcess(cc).value().Succeeded());
  ProcessSpec link;
  link.argv = {"g++", "-shared", "-o", (dir_ / "libcandidate.so").string(), (dir_ / kPrelinkObject).string()};
  ASSERT_TRUE(RunProcess(link).value().Succeeded());
  auto hits = ScanArtifacts({{"native", (dir_ / "libcandidate.so").string()}}, /*libc_level=*/false);
  EXPECT_TRUE(Has(hits, "so.thread", "cheat"));
}

TEST_F(SymbolFileTest, TokenPastedLibraryCallShowsUpInTheBuiltObject) {
  // The source never spells cblas_sgemm: the preprocessor pastes it together.
  const char* src =
      "#define CAT(a, b) a##b\n"
      "extern \"C\" void CAT(cblas_, sgemm)(int, int, int);\n"
      "extern \"C\" int anvil_forward() { CAT(cblas_, sgemm)(1, 2, 3); return 0; }\n";
  ASSERT_TRUE(BuildShared(src));
  auto syms = UndefinedSymbols(dir_ / "k.so");
  ASSERT_TRUE(syms.ok()) << syms.message();
  EXPECT_NE(std::find(syms.value().begin(), syms.value().end(), "cblas_sgemm"), syms.value().end());
  EXPECT_TRUE(Has(ScanSymbols(syms.value(), "k.so", true), "so.vendor_library", "cheat"));
  EXPECT_FALSE(UndefinedSymbols(dir_ / "missing.so").ok());
}

TEST_F(SymbolFileTest, DefinedFunctionsNameTheBuildsOwnFunctionsAlsoStaticOnes) {
  const char* src =
      "void add_kernel(const float*, float*, int) {}\n"
      "static void hidden_kernel(float*) {}\n"
      "extern \"C\" void plain(float* x) { hidden_kernel(x); }\n";
  ASSERT_TRUE(BuildShared(src));
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
