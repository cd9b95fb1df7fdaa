#include "compile/torch_pch.h"

#include <cstdlib>
#include <system_error>
#include <thread>

#include "compile/compiler_run.h"
#include "core/file_lock.h"
#include "core/files.h"
#include "core/sha256.h"

namespace anvil {

namespace fs = std::filesystem;

namespace {

bool WaitForAnotherBuild() {
  if (const char* wait = std::getenv("ANVIL_PCH_WAIT"); wait != nullptr && *wait != '\0') {
    return std::string(wait) != "0";
  }
  return std::thread::hardware_concurrency() < 8;
}

}  // namespace

const ArtifactCache& PchCache(const ArtifactCache& cache) {
  static const std::optional<ArtifactCache> shared = []() -> std::optional<ArtifactCache> {
    const char* dir = std::getenv("ANVIL_PCH_CACHE");
    if (dir == nullptr || *dir == '\0') return std::nullopt;
    // Made now: the compilers' sandbox lets them read only folders that
    // exist when it is made, before this build may make the first PCH here.
    std::error_code ec;
    fs::create_directories(fs::path(dir) / "artifacts", ec);
    return ArtifactCache(fs::path(dir) / "artifacts");
  }();
  return shared ? *shared : cache;
}

std::string TorchPchKey(const std::vector<std::string>& flags, const std::string& torch_version) {
  std::vector<std::string> argv = {"g++"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  return Sha256Hex("torch-extension-pch-v2\n" + torch_version + "\n" + CompilerIdentity("g++") + "\n" +
                   JoinCommand(argv));
}

std::optional<TorchPch> TorchExtensionPch(const std::vector<std::string>& flags, const std::string& torch_version,
                                          const ArtifactCache& cache, const BuildOptions& options,
                                          const std::vector<fs::path>& reads, std::string& log) {
  if (const char* off = std::getenv("ANVIL_PCH"); off != nullptr && std::string(off) == "0") return std::nullopt;
  const std::string key = TorchPchKey(flags, torch_version);
  TorchPch pch;
  const bool wait = WaitForAnotherBuild();
  FileLock lock(cache.LockPath(key), wait);
  if (!wait && !lock.held() && !cache.Lookup(key)) {
    log +=
        "[anvil] another build is precompiling <torch/extension.h> for these flags; this one compiles without "
        "it rather than wait (ANVIL_PCH_WAIT=1 waits)\n";
    return std::nullopt;
  }
  if (auto dir = cache.Lookup(key)) {
    // Both files or neither: without the hand-over header a PCH g++ rejects
    // would leave <torch/extension.h> unfound.
    std::error_code ec;
    if (!fs::exists(*dir / "torch" / "extension.h", ec) || !fs::exists(*dir / kTorchPchFile, ec)) {
      log += "[anvil] the cached precompiled torch header in " + dir->string() + " is incomplete; compiling without\n";
      return std::nullopt;
    }
    pch.include_dir = *dir;
    pch.use = "cached";
    return pch;
  }
  auto scratch = cache.Scratch();
  if (!scratch.ok()) {
    log += "[anvil] no precompiled torch header: " + scratch.message() + "\n";
    return std::nullopt;
  }
  std::error_code ec;
  fs::create_directories(scratch.value() / "torch", ec);
  // g++ looks for torch/extension.h.gch in <dir>, and when it cannot use it
  // (a stale PCH, or a second #include of the header after the PCH), reads
  // <dir>/torch/extension.h instead: that one hands over to the real header.
  const fs::path header = scratch.value() / "pch.h";
  if (ec || !WriteFileAtomic(header, "#include <torch/extension.h>\n").ok() ||
      !WriteFileAtomic(scratch.value() / "torch" / "extension.h", "#include_next <torch/extension.h>\n").ok()) {
    log += "[anvil] no precompiled torch header: cannot write into " + scratch.value().string() + "\n";
    (void)RemoveTree(scratch.value());
    return std::nullopt;
  }
  std::vector<std::string> argv = {"g++"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.insert(argv.end(), {"-x", "c++-header", header.string(), "-o", (scratch.value() / kTorchPchFile).string()});
  auto box = CompilerSandbox::Make({reads, {scratch.value()}});
  if (!box.ok()) {
    log += "[anvil] no precompiled torch header: " + box.message() + "\n";
    (void)RemoveTree(scratch.value());
    return std::nullopt;
  }
  auto run = RunCompiler(argv, options.deadline, box.value());
  if (!run.ok() || !run.value().ok) {
    log += "[anvil] no precompiled torch header (building it failed; compiling without): " +
           (run.ok() ? run.value().log.substr(0, 2000) : run.message()) + "\n";
    (void)RemoveTree(scratch.value());
    return std::nullopt;
  }
  auto dir = cache.Publish(key, scratch.value());
  if (!dir.ok()) {
    log += "[anvil] no precompiled torch header: " + dir.message() + "\n";
    return std::nullopt;
  }
  pch.include_dir = dir.value();
  pch.use = "built";
  pch.seconds = run.value().seconds;
  log += "[anvil] precompiled <torch/extension.h> for this compiler and these flags in " +
         std::to_string(run.value().seconds).substr(0, 5) + " s (reused by later builds)\n";
  return pch;
}

}  // namespace anvil
