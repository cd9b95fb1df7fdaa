#include "integrity/symbol_scan.h"

#include <array>

#include "core/subprocess.h"
#include "integrity/source_scan.h"

namespace anvil {
namespace {

constexpr std::array<std::string_view, 18> kVendorPrefixes = {
    "cublas", "cudnn", "cusparse", "cufft",   "curand",  "cusolver", "cutensor", "nccl",     "cblas_",
    "mkl_",   "dnnl_", "miopen",   "rocblas", "hipblas", "mublas",   "mudnn",    "LAPACKE_", "MKL_"};
// BLAS and LAPACK routines by their Fortran names ("sgemm"), which MKL and
// OpenBLAS export in every spelling: sgemm, sgemm_, SGEMM, SGEMM_ (libtorch_cpu
// exports MKL's).
constexpr std::array<std::string_view, 40> kBlasRoutines = {
    "gemm",  "gemv", "symm",  "hemm",  "syrk",  "herk",  "syr2k", "her2k", "trmm", "trsm",
    "axpy",  "dot",  "dotc",  "dotu",  "scal",  "copy",  "swap",  "nrm2",  "asum", "amax",
    "ger",   "gerc", "geru",  "gbmv",  "symv",  "hemv",  "trmv",  "trsv",  "spmv", "getrf",
    "getrs", "gesv", "potrf", "potrs", "geqrf", "gesvd", "syev",  "heev",  "gels", "gemm3m"};
// Ways to run code of the candidate's outside its calls, or to start a thread
// no thread API names: a timer's notification thread (SIGEV_THREAD), libc's
// clone, libgomp's legacy entry that leaves a region open.
constexpr std::array<std::string_view, 9> kThread = {
    "pthread_create", "std::thread::_M_start_thread", "thrd_create", "clone", "__clone", "clone3", "timer_create",
    "mq_notify",      "GOMP_parallel_start"};
// Signal handlers and timers: code that runs when the call has returned.
constexpr std::array<std::string_view, 12> kSignal = {"sigaction",     "signal",      "sigset",    "bsd_signal",
                                                      "__sysv_signal", "sysv_signal", "setitimer", "timer_settime",
                                                      "alarm",         "ualarm",      "sigqueue",  "pthread_kill"};
constexpr std::array<std::string_view, 13> kProcess = {"fork",    "vfork",       "execv",       "execve", "execvp",
                                                       "execvpe", "execl",       "execlp",      "execle", "system",
                                                       "popen",   "posix_spawn", "posix_spawnp"};
// Patching or walking the process itself: memory protection, the loader and
// its tables (how a lookup of one's own is done: _r_debug, the auxiliary
// vector), other processes' memory, raw system calls.
constexpr std::array<std::string_view, 21> kTamper = {
    "ptrace",          "mprotect",        "pkey_mprotect", "dlopen",          "dlmopen",           "dlsym",
    "dl_iterate_phdr", "dladdr",          "dladdr1",       "dlinfo",          "process_vm_writev", "process_vm_readv",
    "syscall",         "dlvsym",          "_r_debug",      "_dl_debug_state", "getauxval",         "__libc_dlopen_mode",
    "__libc_dlsym",    "_dl_find_object", "mremap"};
// The Python C API's ways to run Python code or to reach the interpreter's
// frames and state (the worker's data): an extension module needs none of
// them (pybind11 uses other entry points).
constexpr std::array<std::string_view, 16> kPythonRun = {"PyRun_",
                                                         "PyImport_",
                                                         "Py_CompileString",
                                                         "PyMarshal_",
                                                         "PyEval_EvalCode",
                                                         "Py_Initialize",
                                                         "PyEval_GetFrame",
                                                         "PyEval_GetLocals",
                                                         "PyEval_GetGlobals",
                                                         "PyThreadState_GetFrame",
                                                         "PyFrame_GetLocals",
                                                         "PyFrame_GetGlobals",
                                                         "PyFrame_GetBuiltins",
                                                         "PySys_GetObject",
                                                         "PyGC_",
                                                         "PyEval_SetTrace"};
// ATen's kernels called past the dispatcher (at::cpu::mm, at::native::relu):
// no aten trace sees them.
constexpr std::array<std::string_view, 8> kAtenBackends = {"at::cpu::",
                                                           "at::cuda::",
                                                           "at::native::",
                                                           "at::compositeexplicitautograd::",
                                                           "at::compositeimplicitautograd::",
                                                           "at::compositeexplicitautogradnonfunctional::",
                                                           "at::mps::",
                                                           "at::xpu::"};

// The name a symbol is called by: "foo" of "foo(int)" or "foo@GLIBC_2.2.5".
std::string_view BareName(std::string_view symbol) {
  symbol = symbol.substr(0, symbol.find('@'));
  return symbol.substr(0, symbol.find('('));
}

template <std::size_t N>
bool OneOf(std::string_view name, const std::array<std::string_view, N>& names) {
  for (auto n : names) {
    if (name == n) return true;
  }
  return false;
}

// "matmul" of "at::_ops::matmul::call", "mm" of "at::cpu::mm"; "" when not
// an ATen op entry point.
std::string_view AtenOp(std::string_view name) {
  constexpr std::string_view kPrefix = "at::_ops::";
  if (name.starts_with(kPrefix)) {
    name.remove_prefix(kPrefix.size());
    return name.substr(0, name.find("::"));
  }
  for (auto backend : kAtenBackends) {
    if (name.starts_with(backend)) {
      name.remove_prefix(backend.size());
      // Helpers of its own below it (at::native::cpublas::gemm) say by their first name.
      return name.substr(0, name.find("::"));
    }
  }
  return {};
}

// ATen's own BLAS (at::native::cpublas::gemm, at::cuda::blas::gemm): a
// vendor library by another name.
bool AtenBlas(std::string_view name) {
  return name.starts_with("at::native::cpublas::") || name.starts_with("at::cuda::blas::") ||
         name.starts_with("at::native::blas_impl::");
}

// sgemm, sgemm_, SGEMM, SGEMM_, isamax (i + s/d/c/z + routine).
bool BlasRoutine(std::string_view name) {
  if (name.ends_with("_")) name.remove_suffix(1);
  if (name.size() < 4) return false;
  if (name[0] == 'i' || name[0] == 'I') name.remove_prefix(1);
  const char type = name[0];
  if (std::string_view("sdczSDCZ").find(type) == std::string_view::npos) return false;
  std::string routine(name.substr(1));
  const bool upper = type >= 'A' && type <= 'Z';
  for (char& c : routine) {
    if (upper && c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (!upper && c >= 'A' && c <= 'Z') return false;  // "sgemm" or "SGEMM", not "sGemm".
  }
  return OneOf(std::string_view(routine), kBlasRoutines);
}

// An op struct is "<name>" or "<name>_<overload>": the longest prefix (cut at
// underscores) that names a compute op, or "" when none does.
std::string_view ComputeBase(std::string_view op) {
  std::string_view candidate = op;
  while (!candidate.empty()) {
    if (IsAtenComputeName(candidate)) return candidate;
    const auto cut = candidate.rfind('_');
    if (cut == std::string_view::npos || cut == 0) break;
    candidate = candidate.substr(0, cut);
  }
  return {};
}

RuleHit Hit(std::string_view rule, std::string_view severity, std::string message, std::string_view symbol,
            std::string_view artifact) {
  RuleHit h;
  h.rule = std::string(rule);
  h.severity = std::string(severity);
  h.message = std::move(message);
  h.excerpt = std::string(symbol.substr(0, 200));
  h.source = std::string(artifact);
  return h;
}

}  // namespace

std::vector<RuleHit> ScanSymbols(const std::vector<std::string>& undefined, std::string_view artifact_name,
                                 bool libc_level, bool native) {
  std::vector<RuleHit> hits;
  for (const auto& symbol : undefined) {
    const std::string_view name = BareName(symbol);
    bool runs_python = native && (name.starts_with("Py") || name.starts_with("_Py"));
    for (auto p : kPythonRun) runs_python = runs_python || name.starts_with(p);
    if (runs_python) {
      hits.push_back(Hit("so.python_api", "cheat",
                         "the built library calls into Python (" + std::string(name) + ")" +
                             (native ? ": a native candidate has no use for it" : ""),
                         symbol, artifact_name));
      continue;
    }
    bool vendor = BlasRoutine(name) || AtenBlas(name);
    for (auto p : kVendorPrefixes) vendor = vendor || name.starts_with(p);
    if (vendor) {
      hits.push_back(Hit("so.vendor_library", "cheat",
                         "the built library calls a vendor library (" + std::string(name) + ")", symbol,
                         artifact_name));
      continue;
    }
    if (const std::string_view op = AtenOp(name); !op.empty()) {
      const std::string_view base = ComputeBase(op);
      hits.push_back(base.empty() ? Hit("so.aten_compute", "evidence",
                                        "the built library calls the ATen op " + std::string(op), symbol, artifact_name)
                                  : Hit("so.aten_compute", "cheat",
                                        "the built library calls ATen compute (" + std::string(base) + ")", symbol,
                                        artifact_name));
      continue;
    }
    if (!libc_level) continue;
    if (OneOf(name, kThread)) {
      hits.push_back(Hit("so.thread", "cheat", "the built library starts threads (" + std::string(name) + ")", symbol,
                         artifact_name));
    } else if (OneOf(name, kSignal)) {
      hits.push_back(Hit("so.signal", "cheat",
                         "the built library installs a signal handler or a timer (" + std::string(name) +
                             "): code that runs after its call has returned",
                         symbol, artifact_name));
    } else if (OneOf(name, kProcess)) {
      hits.push_back(Hit("so.process", "cheat", "the built library starts processes (" + std::string(name) + ")",
                         symbol, artifact_name));
    } else if (OneOf(name, kTamper)) {
      hits.push_back(Hit("so.native_tamper", "cheat",
                         "the built library can patch or probe its process (" + std::string(name) + ")", symbol,
                         artifact_name));
    } else if (name.starts_with("cudaStreamCreate") || name.starts_with("cuStreamCreate")) {
      hits.push_back(Hit("so.stream_create", "evidence",
                         "the built library creates a stream (" + std::string(name) + ")", symbol, artifact_name));
    }
  }
  return hits;
}

namespace {

// nm's lines for `shared_object` with `flags`, as (type letter, name).
Result<std::vector<std::pair<char, std::string>>> NmSymbols(const std::filesystem::path& shared_object,
                                                            std::vector<std::string> flags) {
  ProcessSpec spec;
  spec.argv = {"nm"};
  spec.argv.insert(spec.argv.end(), flags.begin(), flags.end());
  spec.argv.push_back(shared_object.string());
  spec.deadline = std::chrono::seconds(60);
  spec.output_cap = 64 << 20;
  auto r = RunProcess(spec);
  if (!r.ok()) return Status::Error("cannot run nm (binutils): " + r.message());
  if (!r.value().Succeeded()) {
    return Status::Error("nm " + shared_object.string() + " failed (" + r.value().Describe() + "): " + r.value().err);
  }
  std::vector<std::pair<char, std::string>> symbols;
  std::size_t start = 0;
  const std::string& out = r.value().out;
  while (start < out.size()) {
    std::size_t end = out.find('\n', start);
    if (end == std::string::npos) end = out.size();
    std::string_view line(out.data() + start, end - start);
    start = end + 1;
    // "0000000000008fe9 t name" or "                 U name"
    if (line.size() < 20 || line[16] != ' ' || line[18] != ' ') continue;
    std::string_view name = line.substr(19);
    name = name.substr(0, name.find('@'));
    if (!name.empty()) symbols.emplace_back(line[17], std::string(name));
  }
  return symbols;
}

}  // namespace

Result<std::vector<std::string>> UndefinedSymbols(const std::filesystem::path& shared_object) {
  // An object file (the pre-link object of a build that links a runtime statically) has no dynamic table.
  const bool object = shared_object.extension() == ".o";
  auto symbols = NmSymbols(shared_object, object ? std::vector<std::string>{"--undefined-only", "--demangle"}
                                                 : std::vector<std::string>{"-D", "--undefined-only", "--demangle"});
  if (!symbols.ok()) return symbols.status();
  std::vector<std::string> names;
  for (auto& [type, name] : symbols.value()) {
    // Weak references too ('w', 'v'): `asm("pthread_create") __attribute__((weak))` calls what it names.
    if (type == 'U' || type == 'w' || type == 'v') names.push_back(std::move(name));
  }
  return names;
}

Result<std::vector<std::string>> DefinedFunctions(const std::filesystem::path& shared_object) {
  auto symbols = NmSymbols(shared_object, {"--defined-only"});
  if (!symbols.ok()) return symbols.status();
  if (symbols.value().empty()) symbols = NmSymbols(shared_object, {"-D", "--defined-only"});  // Stripped.
  if (!symbols.ok()) return symbols.status();
  std::vector<std::string> names;
  for (auto& [type, name] : symbols.value()) {
    if (type == 'T' || type == 't' || type == 'W' || type == 'w') names.push_back(std::move(name));
  }
  return names;
}

std::vector<RuleHit> ScanArtifacts(const std::map<std::string, std::string>& artifacts, bool libc_level) {
  std::vector<RuleHit> hits;
  for (const auto& [name, path] : artifacts) {
    // A build that links a runtime statically (nvcc's cudart) keeps the candidate's own object beside it: its
    // symbols are the candidate's alone, so every rule applies to them.
    const std::filesystem::path object = std::filesystem::path(path).parent_path() / kPrelinkObject;
    std::error_code ec;
    const bool prelinked = std::filesystem::is_regular_file(object, ec);
    auto symbols = UndefinedSymbols(prelinked ? object : std::filesystem::path(path));
    if (!symbols.ok()) {
      hits.push_back(Hit("so.unscanned", "evidence", symbols.message(), "", name));
      continue;
    }
    for (auto& hit : ScanSymbols(symbols.value(), std::filesystem::path(path).filename().string(),
                                 libc_level || prelinked, name == "native")) {
      hits.push_back(std::move(hit));
    }
  }
  return hits;
}

}  // namespace anvil
