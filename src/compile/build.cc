#include "compile/build.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <future>
#include <optional>

#include "compile/compiler_run.h"
#include "compile/nvcc_phases.h"
#include "compile/torch_pch.h"
#include "core/environment.h"
#include "core/file_lock.h"
#include "core/files.h"
#include "core/sha256.h"
#include "integrity/symbol_scan.h"

namespace anvil {
namespace fs = std::filesystem;
namespace {

fs::path SlimTorchDir() { return SourceDir() / "include" / "anvil" / "slim_torch"; }

// The slim torch headers' text, read once; "" when ANVIL_SLIM_HEADERS=0 or
// when they cannot be read (then every .cu builds with the full headers).
const std::string& SlimTorchHeaders() {
  static const std::string text = [] {
    if (const char* off = std::getenv("ANVIL_SLIM_HEADERS"); off != nullptr && std::string(off) == "0") {
      return std::string();
    }
    std::string all = "slim-torch-v1\n";
    for (const char* name : {"ATen/ATen.h", "torch/extension.h", "torch/library.h"}) {
      auto text = ReadFile(SlimTorchDir() / name);
      if (!text.ok()) return std::string();
      all += std::string(name) + "\n" + text.value();
    }
    return all;
  }();
  return text;
}

int CountLines(const std::string& text) { return static_cast<int>(std::count(text.begin(), text.end(), '\n')) + 1; }

std::string Trim(const std::string& s) {
  std::size_t b = s.find_first_not_of(" \t\r");
  std::size_t e = s.find_last_not_of(" \t\r");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// Where `source` starts in the candidate's file: the line of its first
// non-blank line, found verbatim. 0 when it cannot be located.
int LocateInCandidate(const std::string& source, const std::string& candidate_text) {
  std::size_t start = 0;
  int offset = 0;
  while (start < source.size()) {
    std::size_t end = source.find('\n', start);
    std::string line = Trim(source.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (!line.empty()) {
      std::size_t at = candidate_text.find(line);
      if (at == std::string::npos) return 0;
      int cand_line = static_cast<int>(std::count(candidate_text.begin(), candidate_text.begin() + at, '\n')) + 1;
      return cand_line - offset;
    }
    if (end == std::string::npos) break;
    start = end + 1;
    ++offset;
  }
  return 0;
}

bool IsIdentifier(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isalnum(c) || c == '_'; });
}

void Append(std::vector<std::string>& to, const std::vector<std::string>& from) {
  to.insert(to.end(), from.begin(), from.end());
}

void Finish(CompileResult& result, const std::vector<SourceMap>& maps, const CandidateSource& candidate,
            const BuildOptions& options) {
  result.diagnostics = MapAndDedupe(ParseDiagnostics(result.log), maps, options.diagnostics);
  result.summary = FormatDiagnostics(result.diagnostics, candidate.text);
  if (!result.ok && result.summary.empty()) {
    std::string tail = result.log.size() > 4000 ? result.log.substr(result.log.size() - 4000) : result.log;
    result.summary = tail;
  }
  if (!result.over_quota.empty()) {
    result.summary = "[anvil] " + result.over_quota +
                     ": the source asks too much of the compiler (deep or exploding template instantiation, huge "
                     "constant tables)\n" +
                     result.summary;
  }
}

struct Job {
  std::string key;
  // Run inside the scratch folder: all but the last at once (the compiles),
  // then the last (the link). `phases` names them, for the verdict.
  std::vector<std::vector<std::string>> commands;
  std::vector<std::string> phases;
  std::vector<std::pair<std::string, std::string>> files;  // Written into the scratch folder first.
  std::string artifact;                                    // File name of the product inside the folder.
  // Flags for the first command (after its argv[0]) that are found while
  // the other compiles already run: the torch PCH, which only g++ uses and
  // which the first build of a machine makes (nvcc need not wait for it).
  std::function<std::vector<std::string>()> first_flags;
  // A quicker build of one compile (nvcc with anvil's slim torch headers,
  // include/anvil/slim_torch): tried first; when it fails, the command itself
  // runs and only its log counts. `torch_headers` then says which built it.
  std::optional<std::pair<std::size_t, std::vector<std::string>>> first_try;
  std::string torch_headers;  // Without a first try: "full" for a CUDA build, "" otherwise.
  // The nvcc compile, run in phases (compile/nvcc_phases.h); the first line
  // of cuda.cu after anvil's preamble (0: no preamble).
  std::optional<std::size_t> nvcc_command;
  int nvcc_first_own_line = 0;
  // What the compilers read besides the system's folders (integrity/compiler_sandbox.h); they write the scratch
  // folder only.
  std::vector<fs::path> reads;
};

// Which headers built cuda.cu: a file in the artifact's folder, so a cached
// artifact still says.
constexpr char kTorchHeadersFile[] = "torch_headers";

// The start of every kernelbench extension's cuda.cu: the same for all, so the
// torch part of nvcc's host compile is too (compile/host_pch.h).
constexpr char kCudaPreamble[] = "#include <torch/types.h>\n#include <cuda.h>\n#include <cuda_runtime.h>\n";

// Runs a job unless its artifact is cached; returns the artifact path or "".
std::string RunJob(const Job& job, const ArtifactCache& cache, const BuildOptions& options, CompileResult& result,
                   bool& was_cached) {
  // Concurrent builders of the same key (other threads or anvil processes)
  // wait here, then find the artifact in the cache.
  FileLock lock(cache.LockPath(job.key));
  if (auto dir = cache.Lookup(job.key)) {
    was_cached = true;
    if (auto log = ReadFile(*dir / "build.log"); log.ok()) result.log += log.value();
    if (auto headers = ReadFile(*dir / kTorchHeadersFile); headers.ok()) result.torch_headers = headers.value();
    result.log_path = *dir / "build.log";
    return (*dir / job.artifact).string();
  }
  was_cached = false;
  // What fails before the compilers run, or in anvil's own writes after
  // them, is the machine's: the build's infra_error, never a compile_error.
  auto machine_failed = [&](const std::string& message) {
    result.anvil_problem = message;
    result.log += "[anvil] " + message + "\n";
    return std::string();
  };
  auto scratch = cache.BuildScratch();
  if (!scratch.ok()) return machine_failed(scratch.message());
  for (const auto& [name, text] : job.files) {
    if (Status s = WriteFileAtomic(scratch.value() / name, text); !s.ok()) {
      (void)RemoveTree(scratch.value());
      return machine_failed(s.message());
    }
  }
  auto box = CompilerSandbox::Make({job.reads, {scratch.value()}});
  if (!box.ok()) {
    (void)RemoveTree(scratch.value());
    return machine_failed(box.message());
  }
  std::shared_ptr<JobCgroup> group;
  if (options.quota.any()) {
    auto made = JobCgroup::Create(options.quota);
    if (!made.ok()) {
      (void)RemoveTree(scratch.value());
      return machine_failed("cannot keep the compilers' quotas: " + made.message());
    }
    group = std::move(made.value());
    box.value().set_cgroup(group);
  }
  auto in_scratch = [&](std::vector<std::string> argv) {
    for (auto& a : argv) {
      if (a.rfind("@SCRATCH@", 0) == 0) a = (scratch.value() / a.substr(9)).string();
    }
    return argv;
  };
  std::vector<std::vector<std::string>> commands;
  for (const auto& argv : job.commands) commands.push_back(in_scratch(argv));
  // The compiles are independent (g++ for main.cpp, nvcc for cuda.cu): run
  // them at once, then the link. Logs stay in command order.
  const std::size_t parallel = commands.size() > 2 ? commands.size() - 1 : 0;
  std::vector<std::future<Result<CompilerRun>>> started;
  const auto start = std::chrono::steady_clock::now();
  std::string torch_headers = job.torch_headers;  // Written by the one thread that runs the first try.
  auto run = [&](std::size_t i) -> Result<CompilerRun> {
    if (i == 0 && job.first_flags) {
      const std::vector<std::string> flags = job.first_flags();
      commands[0].insert(commands[0].begin() + 1, flags.begin(), flags.end());
    }
    auto compile = [&](const std::vector<std::string>& argv) {
      if (job.nvcc_command != i) return RunCompiler(argv, options.deadline, box.value());
      return RunNvccInPhases(argv, scratch.value() / "nvcc-tmp", options.deadline, box.value(),
                             HostPchUse{&PchCache(cache), job.nvcc_first_own_line});
    };
    if (!job.first_try || job.first_try->first != i) return compile(commands[i]);
    const std::vector<std::string> slim = in_scratch(job.first_try->second);
    Result<CompilerRun> quick = compile(slim);
    // Built, or out of time: the full headers are more of the same work.
    if (quick.ok() && (quick.value().ok || quick.value().timed_out)) {
      commands[i] = slim;
      torch_headers = "slim";
      return quick;
    }
    // What the full headers say is what the candidate gets to read.
    Result<CompilerRun> full = compile(commands[i]);
    torch_headers = "fallback";
    if (full.ok()) {
      if (quick.ok()) {
        full.value().seconds += quick.value().seconds;
        for (const auto& [step, seconds] : quick.value().step_seconds) full.value().step_seconds[step] += seconds;
      }
      full.value().log = "[anvil] the slim torch headers did not build this source (" +
                         std::string(quick.ok() ? "compiler errors" : quick.message()) +
                         "); built with torch's full headers, as load_inline does\n" + full.value().log;
    }
    return full;
  };
  for (std::size_t i = 0; i < parallel; ++i) started.push_back(std::async(std::launch::async, run, i));
  std::string log;
  bool failed = false;
  for (std::size_t i = 0; i < commands.size(); ++i) {
    if (i >= parallel && failed) break;  // No link after a failed compile.
    Result<CompilerRun> ran = i < parallel ? started[i].get() : run(i);
    log += "$ " + JoinCommand(commands[i]) + "\n";
    if (!ran.ok()) {
      log += "[anvil] " + ran.message() + "\n";
      failed = true;
      continue;
    }
    if (i < job.phases.size()) result.phase_seconds[job.phases[i]] += ran.value().seconds;
    for (const auto& [step, seconds] : ran.value().step_seconds) result.phase_seconds[step] += seconds;
    log += ran.value().log;
    failed = failed || !ran.value().ok;
  }
  result.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.torch_headers = torch_headers;
  if (failed && group && group->Usage().oom_kills > 0) {
    // The kernel's count, never the compiler's text (a candidate can make it print anything).
    result.over_quota = "the compiler " + OverMemoryQuota(options.quota);
    log += "[anvil] " + result.over_quota + "\n";
    if (options.quota.memory_automatic && options.quota.memory_bytes < kAutomaticBuildMemoryFloor) {
      // anvil's own share of a small machine, not a size the user chose: an
      // honest build with torch's headers may need more (nvcc was killed at
      // 2 GiB in a 10 GiB container over 5 jobs), so the kill is the
      // machine's limit, whatever the source.
      result.anvil_problem = result.over_quota +
                             ", a share anvil set itself (the memory available to it over the "
                             "jobs it may run at once) below the " +
                             std::to_string(kAutomaticBuildMemoryFloor >> 30) +
                             " GiB a build with torch's headers may need: the machine's limit, not the candidate's. "
                             "Run fewer jobs at once (--jobs, --compile-jobs) or name a quota (--quota-memory 4G)";
    }
  }
  if (failed) {
    result.log += log;
    // The full log of a failed build outlives its scratch folder.
    fs::path failed_log = cache.FailedLogPath(job.key);
    std::error_code ec;
    fs::create_directories(failed_log.parent_path(), ec);
    if (WriteFileAtomic(failed_log, log).ok()) result.log_path = failed_log;
    (void)RemoveTree(scratch.value());
    return "";
  }
  (void)WriteFileAtomic(scratch.value() / "build.log", log);
  if (!torch_headers.empty()) (void)WriteFileAtomic(scratch.value() / kTorchHeadersFile, torch_headers);
  result.log += log;
  auto dir = cache.Publish(job.key, scratch.value());
  if (!dir.ok()) return machine_failed(dir.message());
  result.log_path = dir.value() / "build.log";
  return (dir.value() / job.artifact).string();
}

}  // namespace

std::vector<std::string> SafeFlags(const std::vector<std::string>& flags, std::vector<std::string>* dropped) {
  static const char* kPrefixes[] = {"-O",
                                    "-D",
                                    "-U",
                                    "-std=",
                                    "-W",
                                    "-g",
                                    "-march=",
                                    "-mtune=",
                                    "-m",
                                    "-ffast-math",
                                    "-funroll",
                                    "-fopenmp",
                                    "-fno-",
                                    "--use_fast_math",
                                    "-use_fast_math",
                                    "-lineinfo",
                                    "--expt-",
                                    "-Xptxas",
                                    "--ptxas-options",
                                    "-maxrregcount",
                                    "--maxrregcount",
                                    "-arch=",
                                    "-gencode",
                                    "--extended-lambda",
                                    "-lcublas",
                                    "-lcudnn",
                                    "-lcurand",
                                    "-lm",
                                    "-fPIC",
                                    "-ftree",
                                    "-fvect"};
  std::vector<std::string> kept;
  for (const auto& f : flags) {
    if (f.empty()) continue;
    bool ok =
        std::any_of(std::begin(kPrefixes), std::end(kPrefixes), [&](const char* p) { return f.rfind(p, 0) == 0; });
    // -Wl,/-Wa,/-Wp, pass arbitrary options to the linker, assembler and preprocessor.
    if (f.find("plugin") != std::string::npos || f.find('@') != std::string::npos || f.rfind("-Wl,", 0) == 0 ||
        f.rfind("-Wa,", 0) == 0 || f.rfind("-Wp,", 0) == 0) {
      ok = false;
    }
    if (ok) {
      kept.push_back(f);
    } else if (dropped != nullptr) {
      dropped->push_back(f);
    }
  }
  return kept;
}

namespace {

// The -D/-U flags of a build: the extension's name and what the candidate's flags define.
std::vector<std::string> Defines(const std::string& name, const std::vector<std::string>& flags) {
  std::vector<std::string> defines = {"-DTORCH_EXTENSION_NAME=" + name};
  for (const auto& f : SafeFlags(flags, nullptr)) {
    if (f.rfind("-D", 0) == 0 || f.rfind("-U", 0) == 0) defines.push_back(f);
  }
  return defines;
}

}  // namespace

NativeSources NativeSourcesOf(const std::vector<ExtensionSpec>& extensions) {
  NativeSources sources;
  for (const auto& ext : extensions) {
    for (std::size_t i = 0; i < ext.cpp_sources.size(); ++i) {
      sources.push_back({ext.name + ".cpp_sources[" + std::to_string(i) + "]", ext.cpp_sources[i], false,
                         Defines(ext.name, ext.extra_cflags)});
    }
    for (std::size_t i = 0; i < ext.cuda_sources.size(); ++i) {
      sources.push_back({ext.name + ".cuda_sources[" + std::to_string(i) + "]", ext.cuda_sources[i], true,
                         Defines(ext.name, ext.extra_cuda_cflags)});
    }
  }
  return sources;
}

CompileResult BuildKernelbench(const std::vector<ExtensionSpec>& extensions, const CandidateSource& candidate,
                               const Backend& backend, const TorchInfo& torch, const ArtifactCache& cache,
                               const BuildOptions& options) {
  CompileResult result;
  result.ran = true;
  result.ok = true;
  result.cached = true;
  const bool cuda_backend = backend.kind() == BackendKind::kCuda;
  result.compiler = "g++";
  std::vector<SourceMap> maps;

  result.native_sources = NativeSourcesOf(extensions);
  // The slim headers' text (part of the key) or "" when off.
  const std::string slim_headers = cuda_backend ? SlimTorchHeaders() : "";
  std::vector<std::string> all_dropped;
  for (const auto& ext : extensions) {
    if (!IsIdentifier(ext.name)) {
      result.ok = false;
      result.log += "[anvil] load_inline name '" + ext.name + "' is not a valid Python identifier\n";
      continue;
    }
    const bool with_cuda = ext.with_cuda.value_or(!ext.cuda_sources.empty());
    if (with_cuda && !cuda_backend) {
      result.ok = false;
      result.log += "[anvil] extension '" + ext.name +
                    "' has CUDA sources but the backend is cpu; use --backend cuda or write a C++ kernel\n";
      continue;
    }

    // main.cpp exactly as load_inline lays it out: the torch header, the
    // candidate's C++ sources joined by newlines, then generated bindings.
    std::string main_cpp = "#include <torch/extension.h>\n";
    int line = 2;
    for (const auto& src : ext.cpp_sources) {
      int at = LocateInCandidate(src, candidate.text);
      if (at > 0) maps.push_back({"main.cpp", line, CountLines(src), candidate.file_name, at});
      main_cpp += src + "\n";
      line += CountLines(src);
    }
    if (ext.has_functions) {
      main_cpp += "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {\n";
      for (const auto& [fn, doc] : ext.functions) {
        if (!IsIdentifier(fn)) {
          result.ok = false;
          result.log += "[anvil] function name '" + fn + "' is not a C++ identifier\n";
          continue;
        }
        std::string safe_doc;
        for (char c : doc) safe_doc += (c == '"' || c == '\\' || c == '\n') ? ' ' : c;
        main_cpp += "m.def(\"" + fn + "\", torch::wrap_pybind_function(" + fn + "), \"" + safe_doc + "\");\n";
      }
      main_cpp += "}\n";
    }
    std::string cuda_cu;
    if (with_cuda) {
      cuda_cu = kCudaPreamble;
      int cline = CountLines(kCudaPreamble);  // Its first own line.
      for (const auto& src : ext.cuda_sources) {
        int at = LocateInCandidate(src, candidate.text);
        if (at > 0) maps.push_back({"cuda.cu", cline, CountLines(src), candidate.file_name, at});
        cuda_cu += src + "\n";
        cline += CountLines(src);
      }
    }

    std::vector<std::string> dropped;
    std::vector<std::string> common = {"-DTORCH_EXTENSION_NAME=" + ext.name};
    for (const auto& inc : with_cuda ? torch.include_paths_cuda : torch.include_paths_cpu) {
      common.push_back("-isystem");
      common.push_back(inc);
    }
    common.push_back("-isystem");
    common.push_back(torch.python_include);

    Job job;
    job.reads = CompilerReads(backend, &torch, {cache.root(), PchCache(cache).root()});
    job.artifact = ext.name + torch.ext_suffix;
    job.files.emplace_back("main.cpp", main_cpp);
    std::vector<std::string> cxx = {"g++"};
    Append(cxx, common);
    Append(cxx, torch.cflags);
    Append(cxx, SafeFlags(ext.extra_cflags, &dropped));
    // Everything but the name, the source and the object: what the PCH must match.
    std::vector<std::string> pch_flags(cxx.begin() + 2, cxx.end());
    Append(cxx, {"-c", "@SCRATCH@main.cpp", "-o", "@SCRATCH@main.o"});
    job.commands.push_back(cxx);
    job.phases.push_back("cxx");
    std::vector<std::string> link = {"g++", "-shared", "@SCRATCH@main.o"};
    if (with_cuda) {
      result.compiler = "nvcc+g++";
      job.files.emplace_back("cuda.cu", cuda_cu);
      std::vector<std::string> nvcc = {backend.NativeCompiler()};
      Append(nvcc, common);
      Append(nvcc, {"-DTORCH_API_INCLUDE_EXTENSION_H"});
      Append(nvcc, torch.nvcc_flags);
      Append(nvcc, backend.ArchFlags());
      Append(nvcc, {"--compiler-options", "-fPIC", "-std=c++17"});
      Append(nvcc, SafeFlags(ext.extra_cuda_cflags, &dropped));
      Append(nvcc, {"-c", "@SCRATCH@cuda.cu", "-o", "@SCRATCH@cuda.o"});
      job.torch_headers = "full";
      job.nvcc_command = job.commands.size();
      job.nvcc_first_own_line = CountLines(kCudaPreamble);
      if (!slim_headers.empty()) {
        std::vector<std::string> slim = {nvcc[0], "-I", SlimTorchDir().string(), "-DAT_PER_OPERATOR_HEADERS"};
        slim.insert(slim.end(), nvcc.begin() + 1, nvcc.end());
        job.first_try.emplace(job.commands.size(), std::move(slim));
      }
      job.commands.push_back(nvcc);
      job.phases.push_back("nvcc");
      link.push_back("@SCRATCH@cuda.o");
      Append(link, torch.ldflags_cuda);
      const std::string nvcc_path = backend.NativeCompiler();
      std::string cuda_home = fs::path(nvcc_path).parent_path().parent_path().string();
      Append(link, {"-L" + cuda_home + "/lib64", "-lcudart"});
    } else {
      Append(link, torch.ldflags_cpu);
    }
    Append(link, SafeFlags(ext.extra_ldflags, &dropped));
    Append(link, {"-o", "@SCRATCH@" + job.artifact});
    job.commands.push_back(link);
    job.phases.push_back("link");
    for (const auto& d : dropped) result.log += "[anvil] dropped candidate compiler flag: " + d + "\n";
    all_dropped.insert(all_dropped.end(), dropped.begin(), dropped.end());

    std::string key_material = "kernelbench-v1\n" + main_cpp + "\n--cu--\n" + cuda_cu + "\n" + torch.torch_version +
                               "\n" + CompilerIdentity("g++");
    if (with_cuda) key_material += CompilerIdentity(backend.NativeCompiler()) + slim_headers;
    for (const auto& cmd : job.commands) key_material += JoinCommand(cmd) + "\n";
    job.key = Sha256Hex(key_material);
    // Not part of the key: the object is the same with or without the PCH.
    // Found (or built) only when the job compiles, beside nvcc.
    std::optional<TorchPch> pch;
    std::string pch_log;
    job.first_flags = [&]() -> std::vector<std::string> {
      pch = TorchExtensionPch(pch_flags, torch.torch_version, PchCache(cache), options, job.reads, pch_log);
      if (!pch) return {};
      return {"-I", pch->include_dir.string(), "-Winvalid-pch"};
    };

    bool was_cached = false;
    const std::string headers_before = result.torch_headers;
    const std::size_t log_mark = result.log.size();
    std::string artifact = RunJob(job, cache, options, result, was_cached);
    result.log.insert(log_mark, pch_log);
    if (pch) {
      result.pch = pch->use;
      if (pch->seconds > 0) result.phase_seconds["pch"] += pch->seconds;
    }
    result.cached = result.cached && was_cached;
    if (headers_before == "fallback" || headers_before == "full") result.torch_headers = headers_before;
    if (artifact.empty()) {
      result.ok = false;
    } else {
      result.artifacts[ext.name] = artifact;
      if (!ext.key.empty()) result.extension_keys[ext.key] = ext.name;
    }
  }
  if (extensions.empty()) result.cached = false;
  Finish(result, maps, candidate, options);
  if (!result.ok && !all_dropped.empty()) {
    // A build that fails for want of a flag says which ones anvil did not pass on.
    std::string flags;
    for (const auto& d : all_dropped) flags += (flags.empty() ? "" : " ") + d;
    result.summary += "\nanvil did not pass these compiler flags of the candidate's on (not allowed): " + flags + "\n";
  }
  return result;
}

CompileResult BuildNative(const fs::path& source, const CandidateSource& candidate, const Backend& backend,
                          const ArtifactCache& cache, const BuildOptions& options) {
  CompileResult result;
  result.ran = true;
  result.compiler = backend.NativeCompiler();
  const bool cuda = backend.kind() == BackendKind::kCuda;
  result.native_sources.push_back({candidate.file_name, candidate.text, cuda, {}});
  std::string ext = source.extension().string();
  if (!cuda && ext == ".cu") {
    result.log = "[anvil] " + candidate.file_name + " is a CUDA source but the backend is cpu; use --backend cuda\n";
    Finish(result, {}, candidate, options);
    return result;
  }
  std::string file_name = cuda ? "candidate.cu" : "candidate.cpp";
  Job job;
  job.reads = CompilerReads(backend, nullptr, {});
  job.artifact = "libcandidate.so";
  job.files.emplace_back(file_name, candidate.text);
  std::vector<std::string> cmd = {backend.NativeCompiler()};
  const std::vector<std::string> flags = backend.NativeFlags((SourceDir() / "include").string());
  if (cuda) {
    // Compiled, then linked: nvcc links cudart statically, whose own calls (threads, dlopen) would hide the
    // candidate's among them; the object keeps the candidate's alone for the symbol scan (kPrelinkObject).
    for (const auto& f : flags) {
      if (f != "-shared") cmd.push_back(f);
    }
    Append(cmd, {"-c", "@SCRATCH@" + file_name, "-o", std::string("@SCRATCH@") + kPrelinkObject});
    job.commands.push_back(cmd);
    job.phases.push_back("nvcc");
    std::vector<std::string> link = {backend.NativeCompiler(), "-shared"};
    Append(link, backend.ArchFlags());
    Append(link, {std::string("@SCRATCH@") + kPrelinkObject, "-o", "@SCRATCH@" + job.artifact});
    job.commands.push_back(link);
    job.phases.push_back("link");
  } else {
    Append(cmd, flags);
    Append(cmd, {"@SCRATCH@" + file_name, "-o", "@SCRATCH@" + job.artifact});
    job.commands.push_back(cmd);
    job.phases.push_back("cxx");
  }
  auto header = ReadFile(SourceDir() / "include/anvil/native.h");
  std::string commands;
  for (const auto& c : job.commands) commands += JoinCommand(c) + "\n";
  job.key = Sha256Hex("native-v1\n" + candidate.text + "\n" + commands + CompilerIdentity(backend.NativeCompiler()) +
                      (header.ok() ? header.value() : ""));
  bool was_cached = false;
  std::string artifact = RunJob(job, cache, options, result, was_cached);
  result.cached = was_cached;
  result.ok = !artifact.empty();
  if (result.ok) result.artifacts["native"] = artifact;
  Finish(result, {{file_name, 1, CountLines(candidate.text), candidate.file_name, 1}}, candidate, options);
  return result;
}

}  // namespace anvil
