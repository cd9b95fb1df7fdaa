#include "backend/torch_info.h"

#include <nlohmann/json.hpp>

#include "core/environment.h"
#include "core/files.h"
#include "core/python.h"
#include "core/sha256.h"

namespace anvil {
namespace fs = std::filesystem;
namespace {

constexpr std::chrono::seconds kProbeDeadline{120};

// Identifies the torch installation without importing it: the path and mtime
// of torch/version.py as the interpreter resolves it.
Result<std::string> InstallationKey() {
  ProcessSpec spec;
  spec.argv = {PythonExecutable(), "-c",
               "import importlib.util,os;s=importlib.util.find_spec('torch');"
               "print(s.origin if s else '');"
               "print(os.path.getmtime(os.path.join(os.path.dirname(s.origin),'version.py')) if s else '')"};
  spec.deadline = std::chrono::seconds(30);
  auto r = RunProcess(spec);
  if (!r.ok()) return Status::Error("cannot run Python (" + PythonExecutable() + "): " + r.message());
  if (!r.value().Succeeded()) {
    // Python itself failed (out of descriptors or memory, a broken install): say what it said.
    return Status::MachineError("cannot ask " + PythonExecutable() + " where torch is (" + r.value().Describe() +
                                "):\n" + TailLines(r.value().err, 4));
  }
  if (r.value().out.find("torch") == std::string::npos) {
    return Status::Error("PyTorch is not installed for " + PythonExecutable() +
                         "; run scripts/setup.sh (or set ANVIL_PYTHON to a Python with torch)");
  }
  // The package folder too: its path is among the ones the sandbox lets the
  // workers read, so two checkouts sharing a cache must not share the probe.
  return Sha256Hex(PythonExecutable() + "\n" + PythonPackageDir().string() + "\n" + r.value().out);
}

std::vector<std::string> Strings(const nlohmann::json& j, const char* key) {
  std::vector<std::string> out;
  if (j.contains(key) && j[key].is_array()) {
    for (const auto& v : j[key]) out.push_back(v.get<std::string>());
  }
  return out;
}

}  // namespace

Result<TorchInfo> LoadTorchInfo(const fs::path& cache_dir) {
  auto key = InstallationKey();
  if (!key.ok()) return key.status();
  fs::path cached = cache_dir / "torch_info" / (key.value().substr(0, 24) + "-v2.json");
  std::string text;
  if (auto c = ReadFile(cached); c.ok()) {
    text = std::move(c).value();
  } else {
    ProcessSpec spec = PythonWorkerSpec("task_worker", {"build-info"});
    spec.deadline = kProbeDeadline;
    auto r = RunProcess(spec);
    if (!r.ok()) return r.status();
    if (!r.value().Succeeded()) {
      return Status::Error("probing torch failed (" + r.value().Describe() + "): " + TailLines(r.value().err, 5));
    }
    text = r.value().out;
    std::error_code ec;
    fs::create_directories(cached.parent_path(), ec);
    (void)WriteFileAtomic(cached, text);
  }
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Status::Error("torch probe printed malformed JSON");
  TorchInfo info;
  info.torch_version = j.value("torch_version", "");
  info.python_include = j.value("python_include", "");
  info.ext_suffix = j.value("ext_suffix", ".so");
  info.include_paths_cpu = Strings(j, "include_paths_cpu");
  info.include_paths_cuda = Strings(j, "include_paths_cuda");
  info.torch_lib = j.value("torch_lib", "");
  info.cflags = Strings(j, "cflags");
  info.nvcc_flags = Strings(j, "nvcc_flags");
  info.ldflags_cpu = Strings(j, "ldflags_cpu");
  info.ldflags_cuda = Strings(j, "ldflags_cuda");
  info.python_paths = Strings(j, "python_paths");
  return info;
}

}  // namespace anvil
