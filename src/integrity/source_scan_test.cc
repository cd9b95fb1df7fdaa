#include "integrity/source_scan.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace anvil {
namespace {

std::vector<RuleHit> Cheats(const std::vector<RuleHit>& hits) {
  std::vector<RuleHit> out;
  for (const auto& h : hits) {
    if (h.severity == "cheat") out.push_back(h);
  }
  return out;
}

// The hit for `rule` on `line`, or a default RuleHit (empty rule) when there is none.
RuleHit Find(const std::vector<RuleHit>& hits, const std::string& rule, int line) {
  for (const auto& h : hits) {
    if (h.rule == rule && h.line == line) return h;
  }
  return {};
}

std::string Describe(const std::vector<RuleHit>& hits) {
  std::string s;
  for (const auto& h : hits) {
    s += h.rule + "/" + h.severity + "@" + std::to_string(h.line) + ":" + std::to_string(h.column) + " " + h.message +
         "\n";
  }
  return s;
}

constexpr char kLegitKernel[] =
    R"cpp(#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_fp16.h>
#include <cub/block/block_reduce.cuh>

#define CHECK_CUDA(x) TORCH_CHECK(x.is_cuda(), #x " must be a CUDA tensor")
#define CEIL_DIV(a, b) (((a) + (b)-1) / (b))

          template <typename scalar_t>
          __global__ void relu_kernel(const scalar_t* __restrict__ x, scalar_t* __restrict__ y, int64_t n) {
            const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
            float acc = 0.f;
            acc = max(acc, 1'000.0f);  // max of two floats, not a tensor
            if (i < n) y[i] = x[i] > scalar_t(0) ? x[i] : scalar_t(0);
          }

          torch::Tensor relu_cuda(const torch::Tensor& x) {
            CHECK_CUDA(x);
            TORCH_CHECK(x.is_contiguous(), "x must be contiguous");
            const at::cuda::OptionalCUDAGuard guard(x.device());
            auto y = at::empty_like(x);
            auto ws = torch::empty({x.size(0), 4}, x.options().dtype(torch::kFloat32));
            auto z = torch::zeros({1}, torch::TensorOptions().device(x.device()));
            const int64_t n = x.numel();
            const int threads = 256;
            cudaStream_t stream = at::cuda::getCurrentCUDAStream();
            AT_DISPATCH_FLOATING_TYPES_AND_HALF(x.scalar_type(), "relu", ([&] {
                                                  relu_kernel<scalar_t><<<CEIL_DIV(n, threads), threads, 0, stream>>>(
                                                      x.data_ptr<scalar_t>(), y.data_ptr<scalar_t>(), n);
                                                }));
            C10_CUDA_KERNEL_LAUNCH_CHECK();
            return y.view({x.size(0), -1}).reshape(x.sizes()).contiguous();
          }
    )cpp";

TEST(SourceScanTest, LegitKernelHasNoCheat) {
  const auto hits = ScanNativeSource(kLegitKernel, "cuda_sources[0]");
  EXPECT_TRUE(Cheats(hits).empty()) << Describe(hits);
}

TEST(SourceScanTest, LegitKernelEvidenceIsOnlyTheCubPrimitiveHeader) {
  const auto hits = ScanNativeSource(kLegitKernel, "cuda_sources[0]");
  ASSERT_EQ(hits.size(), 1u) << Describe(hits);
  EXPECT_EQ(hits[0].rule, "cpp.vendor_library");
  EXPECT_EQ(hits[0].severity, "evidence");
  EXPECT_EQ(hits[0].line, 5);
}

TEST(SourceScanTest, HitFieldsCarryLineColumnExcerptAndSource) {
  const auto hits = ScanNativeSource("int a;\n  auto y = at::matmul(a, b);  \n", "cpp_sources[1]");
  ASSERT_EQ(hits.size(), 1u) << Describe(hits);
  EXPECT_EQ(hits[0].rule, "cpp.aten_compute");
  EXPECT_EQ(hits[0].severity, "cheat");
  EXPECT_EQ(hits[0].line, 2);
  EXPECT_EQ(hits[0].column, 12);
  EXPECT_EQ(hits[0].excerpt, "auto y = at::matmul(a, b);");
  EXPECT_EQ(hits[0].source, "cpp_sources[1]");
  EXPECT_NE(hits[0].message.find("at::matmul"), std::string::npos);
}

struct Case {
  const char* name;
  const char* code;
  const char* rule;
  const char* severity;
  int line;
};

class RuleTest : public ::testing::TestWithParam<Case> {};

TEST_P(RuleTest, Fires) {
  const Case& c = GetParam();
  const auto hits = ScanNativeSource(c.code, "src");
  const RuleHit h = Find(hits, c.rule, c.line);
  EXPECT_EQ(h.rule, c.rule) << Describe(hits);
  EXPECT_EQ(h.severity, c.severity) << Describe(hits);
}

INSTANTIATE_TEST_SUITE_P(
    AllRules, RuleTest,
    ::testing::Values(
        Case{"AtMatmul", "torch::Tensor f(torch::Tensor a) {\n  return at::matmul(a, a);\n}", "cpp.aten_compute",
             "cheat", 2},
        Case{"TorchRelu", "auto y = torch::relu(x);", "cpp.aten_compute", "cheat", 1},
        Case{"GlobalQualified", "auto y = ::at::softmax(x, 1);", "cpp.aten_compute", "cheat", 1},
        Case{"TorchNnFunctional", "y = torch::nn::functional::linear(x, w);", "cpp.aten_compute", "cheat", 1},
        Case{"AtNative", "at::native::add_out(out, a, b);", "cpp.aten_compute", "cheat", 1},
        Case{"TemplateCall", "auto s = at::cat<float>(xs);", "cpp.aten_compute", "cheat", 1},
        Case{"StrongMethod", "return\n  x.matmul(w);", "cpp.aten_compute", "cheat", 2},
        Case{"StrongMethodOnUnknown", "auto y = input->relu();", "cpp.aten_compute", "cheat", 1},
        Case{"GenericMethodOnTensor", "void f(const at::Tensor& x) {\n  auto s = x.contiguous().sum(1);\n}",
             "cpp.aten_compute", "cheat", 2},
        Case{"GenericMethodOnAuto", "auto t = torch::empty({4});\nauto m = t.mean();", "cpp.aten_compute", "cheat", 2},
        Case{"NamespaceAlias", "namespace A = at;\nauto y = A::mm(a, b);", "cpp.aten_compute", "cheat", 2},
        Case{"UsingNamespace", "using namespace torch;\nauto y = matmul(a, b);", "cpp.aten_compute", "cheat", 2},
        Case{"UsingDeclaration", "using at::bmm;\nauto y = bmm(a, b);", "cpp.aten_compute", "cheat", 2},
        Case{"FunctionPointer", "auto* f = &at::addmm;", "cpp.aten_compute", "cheat", 1},
        Case{"AtenNativeInclude", "#include <ATen/native/ReduceOps.h>", "cpp.aten_compute", "evidence", 1},
        Case{"Cublas", "cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k);", "cpp.vendor_library", "cheat", 1},
        Case{"CublasInclude", "#include <cublas_v2.h>", "cpp.vendor_library", "cheat", 1},
        Case{"CublasQuotedInclude", "#include \"cublasLt.h\"", "cpp.vendor_library", "cheat", 1},
        Case{"BlasHandle", "auto h = at::cuda::getCurrentCUDABlasHandle();", "cpp.vendor_library", "cheat", 1},
        Case{"Cudnn", "cudnnConvolutionForward(h, ...);", "cpp.vendor_library", "cheat", 1},
        Case{"Cutlass", "using Gemm = cutlass::gemm::device::Gemm<float>;", "cpp.vendor_library", "cheat", 1},
        Case{"Thrust", "thrust::sort(v.begin(), v.end());", "cpp.vendor_library", "cheat", 1},
        Case{"CubDevice", "cub::DeviceReduce::Sum(tmp, bytes, in, out, n);", "cpp.vendor_library", "cheat", 1},
        Case{"CubBlock", "using R = cub::BlockReduce<float, 256>;", "cpp.vendor_library", "evidence", 1},
        Case{"Cblas", "cblas_sgemm(CblasRowMajor, a, b);", "cpp.vendor_library", "cheat", 1},
        Case{"Mkl", "#include <mkl.h>", "cpp.vendor_library", "cheat", 1},
        Case{"OneDnn", "dnnl::engine eng(dnnl::engine::kind::cpu, 0);", "cpp.vendor_library", "cheat", 1},
        Case{"Eigen", "#include <Eigen/Dense>\nEigen::MatrixXf m;", "cpp.vendor_library", "cheat", 2},
        Case{"StreamCreate", "cudaStream_t s;\ncudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);",
             "cpp.stream_create", "evidence", 2},
        Case{"StreamFromPool", "auto s = at::cuda::getStreamFromPool();", "cpp.stream_create", "evidence", 1},
        Case{"StdThread", "std::thread t([] { work(); });", "cpp.thread", "cheat", 1},
        Case{"StdThreadSpaced", "std :: thread t(work);", "cpp.thread", "cheat", 1},
        Case{"StdAsync", "auto f = std::async(std::launch::async, work);", "cpp.thread", "cheat", 1},
        Case{"Pthread", "pthread_create(&tid, nullptr, work, nullptr);", "cpp.thread", "cheat", 1},
        Case{"HostCallback", "cudaLaunchHostFunc(stream, cb, nullptr);", "cpp.thread", "evidence", 1},
        Case{"L2Window", "attr.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;", "cpp.l2_persist", "cheat",
             1},
        Case{"L2Limit", "cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, bytes);", "cpp.l2_persist", "cheat", 1},
        Case{"L2StreamAttr", "cudaStreamSetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &attr);",
             "cpp.l2_persist", "cheat", 1},
        Case{"System", "system(\"nvidia-smi\");", "cpp.process", "cheat", 1},
        Case{"StdSystem", "std::system(cmd);", "cpp.process", "cheat", 1},
        Case{"Popen", "FILE* p = popen(cmd, \"r\");", "cpp.process", "cheat", 1},
        Case{"Fork", "if (fork() == 0) {}", "cpp.process", "cheat", 1},
        Case{"Execvp", "execvp(argv[0], argv);", "cpp.process", "cheat", 1},
        Case{"Mprotect", "mprotect(page, 4096, PROT_WRITE);", "cpp.native_tamper", "cheat", 1},
        Case{"Dlsym", "auto f = dlsym(RTLD_NEXT, \"cudaEventElapsedTime\");", "cpp.native_tamper", "cheat", 1},
        Case{"Fopen", "FILE* f = fopen(\"/proc/self/mem\", \"r+\");", "cpp.file_access", "cheat", 1},
        Case{"Ofstream", "std::ofstream out(\"x.txt\");", "cpp.file_access", "cheat", 1},
        Case{"AsmSyscall", "asm volatile(\"syscall\" : \"=a\"(r) : \"a\"(257L) : \"rcx\", \"r11\");",
             "cpp.native_tamper", "cheat", 1},
        Case{"AsmRawBytes", "asm volatile(\".byte 0x0f, 0x05\" : \"=a\"(r) : \"a\"(39L));", "cpp.native_tamper",
             "cheat", 1},
        Case{"AsmIncbin", "__asm__(\".pushsection .rodata\\n.incbin \\\"/tmp/out.bin\\\"\\n.popsection\");",
             "cpp.native_tamper", "cheat", 1},
        Case{"DlIteratePhdr", "dl_iterate_phdr(visit, &found);", "cpp.native_tamper", "cheat", 1},
        Case{"LoaderDebug", "auto* map = _r_debug.r_map;", "cpp.native_tamper", "cheat", 1},
        Case{"ElfSymbols", "const ElfW(Sym)* sym = table;", "cpp.native_tamper", "cheat", 1},
        Case{"LinkInclude", "#include <link.h>\n", "cpp.native_tamper", "cheat", 1},
        Case{"PyRun", "PyRun_SimpleString(code);", "cpp.python_api", "cheat", 1},
        Case{"PybindImport", "auto torch = py::module_::import(\"torch\");", "cpp.python_api", "cheat", 1},
        Case{"ProcMapsString", "const char* p = \"/proc/self/maps\";", "cpp.file_access", "cheat", 1},
        Case{"CachePathString", "const char* p = \"/root/.cache/anvil/tasks/relu/trial_0\";", "cpp.file_access",
             "cheat", 1},
        Case{"Embed", "const unsigned char out[] = {\n#embed \"out0.bin\"\n};", "cpp.file_access", "cheat", 2},
        Case{"IncludeFromTheCache", "#include \"/root/.cache/anvil/tasks/relu/expected.h\"\n", "cpp.file_access",
             "cheat", 1},
        Case{"StdFilesystem", "std::filesystem::create_directory(p);", "cpp.file_access", "cheat", 1},
        Case{"FopenPointer", "FILE* (*f)(const char*, const char*) = &std::fopen;", "cpp.file_access", "cheat", 1},
        Case{"OpenPointer", "auto o = &open;", "cpp.file_access", "cheat", 1},
        Case{"SystemAsArgument", "run_with(std::system, cmd);", "cpp.process", "cheat", 1},
        Case{"Getenv", "const char* v = getenv(\"X\");", "cpp.file_access", "evidence", 1},
        Case{"TokenPaste", "#define CALL(a, b) a##b\nCALL(cudaStream, Create)(&s);", "cpp.token_paste", "evidence", 1},
        Case{"TokenPasteContinuation", "#define API(x) \\\n  cuda ## x\n", "cpp.token_paste", "evidence", 2}),
    [](const ::testing::TestParamInfo<Case>& info) { return std::string(info.param.name); });

TEST(SourceScanTest, HitsInCommentsAndStringsAreIgnored) {
  const char* code = R"cpp(// at::matmul(a, b); std::thread t; system("x");
                           /* cublasGemmEx(h);
                              cudaStreamCreate(&s); */
                           const char* s = "at::matmul(a, b) cudaAccessPropertyPersisting std::thread";
                           const char* r = R"raw(torch::relu(x); fork();)raw";
                           const char c = '"';
                           int big = 1'000'000;  // a digit separator, not a character literal: at::relu(x)
                           /* unterminated comment to the end: at::matmul(a, b)
)cpp";
  const auto hits = ScanNativeSource(code, "src");
  EXPECT_TRUE(hits.empty()) << Describe(hits);
}

TEST(SourceScanTest, CodeAfterLiteralsIsStillScanned) {
  const char* code =
      "const char* s = \"a \\\" b\"; auto y = at::matmul(a, b);\n"
      "char q = '\\''; auto z = at::relu(a);\n";
  const auto hits = ScanNativeSource(code, "src");
  EXPECT_EQ(Find(hits, "cpp.aten_compute", 1).severity, "cheat") << Describe(hits);
  EXPECT_EQ(Find(hits, "cpp.aten_compute", 2).severity, "cheat") << Describe(hits);
}

TEST(SourceScanTest, MetadataAndAllocationAreAllowed) {
  const char* code = R"cpp(
    torch::Tensor f(torch::Tensor a, at::Tensor b) {
      auto opts = a.options();
      auto out = at::empty_strided(a.sizes(), a.strides(), opts);
      auto blob = torch::from_blob(ptr, {4}, torch::kFloat);
      at::ScalarType t = at::kHalf;
      int64_t n = a.numel() + a.size(0) + a.stride(0) + a.dim();
      bool ok = a.is_cuda() && a.scalar_type() == at::ScalarType::Float && a.device().is_cuda();
      TORCH_CHECK(ok, "bad");
      TORCH_CHECK_EQ(n, 4);
      auto v = a.view({-1}).reshape({2, -1}).contiguous().transpose(0, 1).permute({1, 0});
      at::IntArrayRef sizes = a.sizes();
      c10::cuda::CUDAGuard g(a.device());
      float* p = out.data_ptr<float>();
      auto m = std::max(n, int64_t{1});
      return out.zero_();
    }
  )cpp";
  const auto hits = ScanNativeSource(code, "src");
  EXPECT_TRUE(hits.empty()) << Describe(hits);
}

TEST(SourceScanTest, TiledGemmAndCpuKernelsHaveNoHits) {
  const char* code = R"cpp(
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <mma.h>
#include <omp.h>
    using namespace nvcuda;
    extern "C" __global__ void gemm(const half* A, const half* B, float* C, int M, int N, int K) {
      __shared__ float tile[32][33];
      wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
      wmma::fill_fragment(acc, 0.0f);
      float v = fmaxf(expf(tile[threadIdx.y][threadIdx.x]), 0.f);
      for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffff, v, o);
      atomicAdd(&C[0], v);
      __syncthreads();
    }
    torch::Tensor forward(torch::Tensor a, torch::Tensor b) {
      TORCH_CHECK(a.size(1) == b.size(0), "shape mismatch: ", a.sizes(), " vs ", b.sizes());
      auto options = torch::TensorOptions().dtype(a.dtype()).device(a.device());
      torch::Tensor c = torch::zeros({a.size(0), b.size(1)}, options);
      dim3 block(16, 16), grid((b.size(1) + 15) / 16, (a.size(0) + 15) / 16);
      gemm<<<grid, block, 0, at::cuda::getCurrentCUDAStream()>>>(reinterpret_cast<const half*>(a.data_ptr<at::Half>()),
                                                                 reinterpret_cast<const half*>(b.data_ptr<at::Half>()),
                                                                 c.data_ptr<float>(), a.size(0), b.size(1), a.size(1));
      cudaError_t err = cudaGetLastError();
      if (err != cudaSuccess) printf("CUDA error: %s\n", cudaGetErrorString(err));
      return c;
    }
    void cpu_relu(const float* x, float* y, int64_t n) {
#pragma omp parallel for
      for (int64_t i = 0; i < n; ++i) y[i] = std::max(x[i], 0.0f);
      at::parallel_for(0, n, 1024, [&](int64_t b, int64_t e) {
        for (auto i = b; i < e; ++i) y[i] = x[i];
      });
    }
    PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("forward", &forward, "forward (CUDA)"); }
  )cpp";
  const auto hits = ScanNativeSource(code, "src");
  EXPECT_TRUE(hits.empty()) << Describe(hits);
}

TEST(SourceScanTest, PtxInlineAssemblyIsNotASystemCall) {
  auto hits = ScanNativeSource(
      "asm volatile(\"mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0}, {%1}, {%2}, {%3};\" : \"+f\"(d));\n"
      "asm(\"cp.async.commit_group;\\n\" ::);\n"
      "asm volatile(\"{ .reg .b32 t; .reg .pred p; ld.global.nc.v4.f32 {%0,%1,%2,%3}, [%4]; }\" : \"=f\"(a));\n"
      "asm(\"st.shared.b8 [%0], %1; cvt.rn.f16.f32 %0, %1; mov.u32 %0, %%laneid;\" : \"=r\"(x));\n",
      "k.cu");
  for (const auto& h : hits) EXPECT_NE(h.rule, "cpp.native_tamper") << h.message;
  // A comment inside the statement is not its code.
  hits =
      ScanNativeSource("asm volatile(\"nop\"  // the syscall instruction, .byte 0x0f 0x05\n : \"=a\"(r));\n", "k.cu");
  for (const auto& h : hits) EXPECT_NE(h.rule, "cpp.native_tamper") << h.message;
}

TEST(SourceScanTest, TheCandidatesOwnFunctionsAndHelpersAreNotATen) {
  // Its own relu() under `using namespace torch`, a method of its own struct named like a tensor method, SIMD
  // vectors of at::vec, the thread-pool queries of ATen/Parallel.h and the core count: no compute, no thread.
  const char* code = R"cpp(using namespace torch;
                           static inline float relu(float v) { return v > 0.f ? v : 0.f; }
                           struct Epilogue {
                             float relu(float v) const { return v > 0.f ? v : 0.f; }
                           };
                           void k(const float* a, float* b, int64_t n, Epilogue op) {
                             for (int64_t i = 0; i < n; ++i) b[i] = relu(a[i]) + op.relu(a[i]);
                             auto v = at::vec::Vectorized<float>::loadu(a) - at::vec::Vectorized<float>(1.f);
                             auto e = v.exp();
                             TORCH_CHECK(!at::in_parallel_region(), "nested");
                             at::init_num_threads();
                             const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
                           }
  )cpp";
  EXPECT_TRUE(Cheats(ScanNativeSource(code, "k.cpp")).empty());
  // Calling ATen's relu under the same using-directive still is compute.
  EXPECT_FALSE(Cheats(ScanNativeSource("using namespace torch;\nauto y = relu(x);\n", "k.cpp")).empty());
  EXPECT_FALSE(Cheats(ScanNativeSource("auto y = x.relu();\n", "k.cpp")).empty());
}

TEST(SourceScanTest, VariablesNamedLikeFileFunctionsAreNotFileAccess) {
  // `open` and `rename` as plain values are variables; only &open or std::open name the function.
  auto hits = ScanNativeSource("bool open = n > 0;\nint rename = 1;\nuse(open, rename);\nx = open;\n", "k.cu");
  for (const auto& h : hits) EXPECT_NE(h.rule, "cpp.file_access") << h.message;
}

TEST(SourceScanTest, GenericMethodsOnNonTensorsAreAllowed) {
  const char* code = R"cpp(
    struct Acc {
      float sum(float x) const { return x; }
    };
    __device__ float g(Acc acc, float4 v) {
      namespace cg = cooperative_groups;
      auto tile = cg::tiled_partition<32>(cg::this_thread_block());
      bool any = tile.any(v.x > 0.f);
      return acc.sum(v.x) + tile.all(any);
    }
  )cpp";
  const auto hits = ScanNativeSource(code, "src");
  EXPECT_TRUE(hits.empty()) << Describe(hits);
}

// Red-team sweep 2 (issue 4): spellings that got past the scan.
TEST(SourceScanTest, AsmLabelsAreTheNamesTheyGive) {
  struct Case {
    const char* code;
    const char* rule;
  };
  const Case cases[] = {
      {"extern \"C\" int start(void*, void*, void*(*)(void*), void*) asm(\"pthread_create\") __attribute__((weak));",
       "cpp.thread"},
      {"extern \"C\" void* find(void*, const char*) __asm__(\"dlsym\");", "cpp.native_tamper"},
      {"extern \"C\" int run(const char*) asm(\"PyRun_SimpleString\");", "cpp.python_api"},
      {"at::Tensor product(const at::Tensor&, const at::Tensor&) asm(\"_ZN2at3cpu2mmERKNS_6TensorES3_\");",
       "cpp.aten_compute"},
      {"extern \"C\" int arm(int, const void*, void*) asm(\"sigaction\");", "cpp.signal"},
      {"asm(\".weak _ZNSt6thread15_M_start_threadESt10unique_ptrINS_6_StateESt14default_deleteIS1_EEPFvvE\");",
       "cpp.native_tamper"},
  };
  for (const auto& c : cases) {
    const auto hits = ScanNativeSource(c.code, "src");
    EXPECT_NE(Find(hits, c.rule, 1).rule, "") << c.code << "\n" << Describe(hits);
  }
  // An honest label (a libc function under another name) and PTX are not.
  EXPECT_TRUE(
      Cheats(ScanNativeSource("extern \"C\" void* copy(void*, const void*, unsigned long) asm(\"memcpy\");\n"
                              "__device__ int lane() { int l; asm volatile(\"mov.u32 %0, %%laneid;\" : \"=r\"(l)); "
                              "return l; }\n",
                              "src"))
          .empty());
}

TEST(SourceScanTest, AtenKernelsPastTheDispatcherInEverySpelling) {
  for (const char* code : {"at::Tensor f(at::Tensor a, at::Tensor b) { return ::at::cpu::mm(a, b); }",
                           "namespace q = ::at::cpu;\nat::Tensor f(at::Tensor x) { return q::_softmax(x, 1, false); }",
                           "static auto kThresh = at::cpu::threshold;",
                           "using namespace at::cpu;\nat::Tensor f(at::Tensor b, at::Tensor x, at::Tensor w) "
                           "{ return (addmm)(b, x, w.t()); }",
                           "auto y = at::cuda::mm(a, b);", "auto f = &at::mul;"}) {
    EXPECT_FALSE(Cheats(ScanNativeSource(code, "src")).empty()) << code;
  }
  // The stream to launch on and ATen's helpers are no kernels.
  EXPECT_TRUE(Cheats(ScanNativeSource("auto s = at::cuda::getCurrentCUDAStream();\n"
                                      "return ::at::empty_like(x);",
                                      "src"))
                  .empty());
}

TEST(SourceScanTest, SignalHandlersTimersAndLegacyOpenMpRegionsAreCheats) {
  EXPECT_NE(Find(ScanNativeSource("void f() { signal(SIGALRM, handler); }", "src"), "cpp.signal", 1).rule, "");
  EXPECT_NE(Find(ScanNativeSource("void f() { timer_create(CLOCK_MONOTONIC, &ev, &t); }", "src"), "cpp.signal", 1).rule,
            "");
  EXPECT_NE(Find(ScanNativeSource("void f() { GOMP_parallel_start(fn, 0, 2); }", "src"), "cpp.thread", 1).rule, "");
  EXPECT_NE(Find(ScanNativeSource("long r = syscall(39);", "src"), "cpp.native_tamper", 1).rule, "");
  // A variable called signal, or the candidate's own function of that name, is not.
  EXPECT_TRUE(Cheats(ScanNativeSource("float signal = x[0] * 2.f;", "src")).empty());
  EXPECT_TRUE(Cheats(ScanNativeSource("float alarm(float v) { return v; }\nfloat y = alarm(1.f);", "src")).empty());
}

TEST(SourceScanTest, StringsSplitIntoPiecesAndPythonsFrameNames) {
  EXPECT_NE(Find(ScanNativeSource("const char* p = \"/pro\" \"c/self/maps\";", "src"), "cpp.file_access", 1).rule, "");
  EXPECT_NE(Find(ScanNativeSource("auto f = frame.attr(\"f_back\");", "src"), "cpp.python_api", 1).rule, "");
  EXPECT_TRUE(Cheats(ScanNativeSource("const char* a = \"relu \" \"kernel\";", "src")).empty());
}

// Legit sweep 2 (issue 4): honest code the scan called compute.
TEST(SourceScanTest, SimdVectorsOwnTypesAndOwnMembersAreNotTensors) {
  const char* cases[] = {
      // at::vec's Vectorized: its erf() and rsqrt() are SIMD math.
      "using Vec = at::vec::Vectorized<float>;\n"
      "void f(const float* px, float* py) {\n"
      "  const Vec half(0.5f), one(1.0f), k(0.7f);\n"
      "  Vec v = Vec::loadu(px);\n"
      "  Vec r = half * v * (one + (v * k).erf());\n"
      "  Vec s = Vec::loadu(px).rsqrt();\n"
      "  r.store(py);\n"
      "}\n",
      // ATen's own alias for its vector namespace.
      "namespace vec = at::vec;\nusing fVec = vec::Vectorized<float>;\n"
      "float m(fVec vm) { return vec::vec_reduce_all<float>([](fVec& a, fVec& b) { return vec::maximum(a, b); }, vm); "
      "}\n",
      // One name, a SIMD value in one function and a tensor in another.
      "using Vec = at::vec::Vectorized<float>;\n"
      "static inline Vec silu(Vec x) { return x / (Vec(1.0f) + x.neg().exp()); }\n"
      "torch::Tensor g(torch::Tensor x) { return torch::empty_like(x); }\n",
      "struct Stats { double mean = 0; void add(double v) { mean += v; } };\n"
      "static void row(const float* x, int n) { Stats stats; for (int i = 0; i < n; ++i) stats.add(x[i]); }\n"
      "torch::Tensor h(torch::Tensor x) { torch::Tensor stats = torch::empty({2}, x.options()); return stats; }\n",
      // A native candidate's own struct named Tensor.
      "struct Tensor { float* p; float max(int r) const { return p[r]; } float sum(int r) const { return p[r]; } };\n"
      "int f(float* q) { Tensor x{q}; return x.max(0) + x.sum(0) > 0; }\n",
      // Its own members, defined out of line or with a trailing return type.
      "struct SeluParams { float alpha; float elu(float v) const; };\n"
      "float SeluParams::elu(float v) const { return v > 0.f ? v : alpha * v; }\n"
      "float g(const SeluParams& p, float v) { return p.elu(v); }\n",
      "struct Selu { auto elu(float v) const -> float { return v; } };\nfloat g(float v) { const Selu a; return "
      "a.elu(v); }\n",
      // Its own lambdas named like ATen's functions.
      "using namespace at;\nTensor f(const Tensor& x) { auto gelu = [](float v) { return v; }; float y = gelu(1.f); "
      "return empty_like(x); }\n",
      "using namespace torch::indexing;\nint64_t f(const float* c) { auto argmax = [](const float* p) { return 0; }; "
      "return argmax(c); }\n",
      // Its own helper named like a libc function.
      "static std::vector<float> clone(const float* p, int n) { return std::vector<float>(p, p + n); }\n"
      "void f(const float* p) { auto v = clone(p, 4); }\n",
      // ATen's metadata helpers and the binding anvil itself generates.
      "int64_t d = at::maybe_wrap_dim(dim, x.dim());\nat::OptionalDeviceGuard g(at::device_of(x));\n"
      "auto t = at::promoteTypes(a.scalar_type(), b.scalar_type());\n"
      "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def(\"mv\", torch::wrap_pybind_function(mv), \"mv\"); }\n",
  };
  for (const char* code : cases) {
    const auto hits = Cheats(ScanNativeSource(code, "src"));
    EXPECT_TRUE(hits.empty()) << code << "\n" << Describe(hits);
  }
  // The same methods on tensors still are compute.
  EXPECT_FALSE(Cheats(ScanNativeSource("torch::Tensor f(torch::Tensor x) { return x.erf(); }", "src")).empty());
  EXPECT_FALSE(Cheats(ScanNativeSource("torch::Tensor f(torch::Tensor x) { return (x * 2).rsqrt(); }", "src")).empty());
}

TEST(SourceScanTest, OneHitPerRuleAndLine) {
  const auto hits = ScanNativeSource("auto y = at::matmul(at::relu(a), at::mm(b, c));", "src");
  EXPECT_EQ(hits.size(), 1u) << Describe(hits);
}

TEST(SourceScanTest, EmptyAndOddInputsDoNotCrash) {
  EXPECT_TRUE(ScanNativeSource("", "src").empty());
  EXPECT_TRUE(ScanNativeSource("\"", "src").empty());
  EXPECT_TRUE(ScanNativeSource("R\"abc(", "src").empty());
  EXPECT_TRUE(ScanNativeSource("x.", "src").empty());
  EXPECT_TRUE(ScanNativeSource(")).sum(", "src").empty());
  EXPECT_TRUE(ScanNativeSource("#include", "src").empty());
  EXPECT_TRUE(ScanNativeSource(std::string(1000, '('), "src").empty());
  EXPECT_TRUE(ScanNativeSource("at::", "src").empty());
}

}  // namespace
}  // namespace anvil
