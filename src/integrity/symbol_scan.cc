#include "integrity/symbol_scan.h"

#include <array>

#include "core/subprocess.h"
#include "integrity/source_scan.h"

namespace anvil {
namespace {

constexpr std::array<std::string_view, 16> kVendorPrefixes = {
    "cublas", "cudnn", "cusparse", "cufft",  "curand",  "cusolver", "cutensor", "nccl",
    "cblas_", "mkl_",  "dnnl_",    "miopen", "rocblas", "hipblas",  "mublas",   "mudnn"};
constexpr std::array<std::string_view, 8> kFortranBlas = {"sgemm_", "dgemm_", "cgemm_", "zgemm_",
                                                          "sgemv_", "dgemv_", "ssyrk_", "dsyrk_"};
constexpr std::array<std::string_view, 3> kThread = {"pthread_create", "std::thread::_M_start_thread", "thrd_create"};
constexpr std::array<std::string_view, 13> kProcess = {"fork",    "vfork",       "execv",       "execve", "execvp",
                                                       "execvpe", "execl",       "execlp",      "execle", "system",
                                                       "popen",   "posix_spawn", "posix_spawnp"};
constexpr std::array<std::string_view, 12> kTamper = {
    "ptrace",          "mprotect", "pkey_mprotect",     "dlopen",           "dlmopen", "dlsym",
    "dl_iterate_phdr", "dladdr",   "process_vm_writev", "process_vm_readv", "syscall", "dlvsym"};
// The Python C API's ways to run Python code: an extension module needs none
// of them (pybind11 uses other entry points).
constexpr std::array<std::string_view, 6> kPythonRun = {"PyRun_",     "PyImport_",       "Py_CompileString",
                                                        "PyMarshal_", "PyEval_EvalCode", "Py_Initialize"};

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

// "matmul" of "at::_ops::matmul::call"; "" when not an ATen op entry point.
std::string_view AtenOp(std::string_view name) {
  constexpr std::string_view kPrefix = "at::_ops::";
  if (!name.starts_with(kPrefix)) return {};
  name.remove_prefix(kPrefix.size());
  return name.substr(0, name.find("::"));
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
    bool vendor = OneOf(name, kFortranBlas);
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
  auto symbols = NmSymbols(shared_object, {"-D", "--undefined-only", "--demangle"});
  if (!symbols.ok()) return symbols.status();
  std::vector<std::string> names;
  for (auto& [type, name] : symbols.value()) {
    if (type == 'U') names.push_back(std::move(name));
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
    auto symbols = UndefinedSymbols(path);
    if (!symbols.ok()) {
      hits.push_back(Hit("so.unscanned", "evidence", symbols.message(), "", name));
      continue;
    }
    for (auto& hit :
         ScanSymbols(symbols.value(), std::filesystem::path(path).filename().string(), libc_level, name == "native")) {
      hits.push_back(std::move(hit));
    }
  }
  return hits;
}

}  // namespace anvil
