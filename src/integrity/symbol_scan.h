// Evidence from a built shared object: the symbols it needs from elsewhere
// (`nm -D --undefined-only`), demangled. What the preprocessor hid from the
// source scan (token pasting, macros) shows up here as the library call it
// became: cublasSgemm_v2, at::_ops::matmul::call, pthread_create. Pure
// functions plus one that runs nm; thread-safe.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "integrity/rule_hit.h"

namespace anvil {

// Rules: so.vendor_library (cheat: cuBLAS, cuDNN, cuSPARSE, cuFFT, cuRAND,
// cuSOLVER, cuTENSOR, NCCL, BLAS, MKL, oneDNN), so.aten_compute (cheat for a
// compute op such as matmul or relu; other ATen ops are evidence). With
// `libc_level` (artifacts that link the C runtime dynamically: CPU builds and
// kernelbench extensions, not nvcc's statically linked cudart): so.thread,
// so.signal, so.process, so.native_tamper (cheat) and so.stream_create
// (evidence). Weak references count as calls.
// so.python_api (cheat): the C API's ways to run Python code (PyRun_*,
// PyImport_*, ...); for a `native` artifact, any Python symbol at all.
std::vector<RuleHit> ScanSymbols(const std::vector<std::string>& undefined, std::string_view artifact_name,
                                 bool libc_level, bool native = false);

// The demangled undefined dynamic symbols of `shared_object` (version suffixes
// removed). Error when nm cannot run or fails.
Result<std::vector<std::string>> UndefinedSymbols(const std::filesystem::path& shared_object);

// The (mangled) names of the functions `shared_object` defines, from its
// symbol table (its dynamic one when stripped): a kernel's host-side stub has
// the kernel's own name, so these name the kernels the build contains.
Result<std::vector<std::string>> DefinedFunctions(const std::filesystem::path& shared_object);

// A native CUDA build's object before it is linked with nvcc's static
// cudart, kept beside the library (compile/build.cc).
inline constexpr char kPrelinkObject[] = "candidate.o";

// ScanSymbols over every artifact (name -> path, as in CompileResult); an
// artifact nm cannot read gives an evidence hit so.unscanned. Where the
// artifact's pre-link object lies beside it, that object is scanned instead,
// with every rule (`libc_level`).
std::vector<RuleHit> ScanArtifacts(const std::map<std::string, std::string>& artifacts, bool libc_level);

}  // namespace anvil
