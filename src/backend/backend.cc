#include "backend/backend.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>

#include "core/subprocess.h"

namespace anvil {

Result<Backend> Backend::FromName(const std::string& name) {
  if (name == "cpu") return Backend(BackendKind::kCpu, name);
  if (name == "cuda") return Backend(BackendKind::kCuda, name);
  return Status::Error("unknown backend '" + name + "' (choose cpu or cuda)");
}

bool Backend::HasDevice() const {
  if (kind_ == BackendKind::kCpu) return true;
  const char* forced = std::getenv("ANVIL_ASSUME_NO_GPU");
  if (forced != nullptr && std::string(forced) == "1") return false;
  std::error_code ec;
  return std::filesystem::exists("/dev/nvidia0", ec) || std::filesystem::exists("/dev/nvidiactl", ec);
}

std::string Backend::DeviceModel() const {
  static std::mutex mu;
  static std::map<BackendKind, std::string> memo;
  std::lock_guard<std::mutex> lock(mu);
  auto it = memo.find(kind_);
  if (it != memo.end()) return it->second;
  std::string model;
  if (kind_ == BackendKind::kCpu) {
    std::ifstream cpuinfo("/proc/cpuinfo");
    for (std::string line; std::getline(cpuinfo, line);) {
      if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos) {
        model = line.substr(line.find(':') + 2);
        break;
      }
    }
  } else {
    ProcessSpec spec;
    spec.argv = {"nvidia-smi", "--query-gpu=name", "--format=csv,noheader"};
    spec.deadline = std::chrono::seconds(20);
    if (auto r = RunProcess(spec); r.ok() && r.value().Succeeded()) {
      model = r.value().out.substr(0, r.value().out.find('\n'));
    }
  }
  if (model.empty()) model = "unknown " + name_;
  memo[kind_] = model;
  return model;
}

std::string Backend::NativeCompiler() const {
  if (kind_ == BackendKind::kCpu) return "g++";
  const char* cuda_home = std::getenv("CUDA_HOME");
  std::string home = cuda_home != nullptr ? cuda_home : "/usr/local/cuda";
  std::error_code ec;
  if (std::filesystem::exists(home + "/bin/nvcc", ec)) return home + "/bin/nvcc";
  return "nvcc";
}

std::vector<std::string> Backend::ArchFlags() const {
  if (kind_ == BackendKind::kCpu) return {};
  const char* arch = std::getenv("ANVIL_CUDA_ARCH");
  std::string sm = arch != nullptr ? arch : "90";
  return {"-gencode=arch=compute_" + sm + ",code=sm_" + sm};
}

std::vector<std::string> Backend::NativeFlags(const std::string& include_dir) const {
  if (kind_ == BackendKind::kCpu) {
    return {"-O2", "-std=c++17", "-fPIC", "-shared", "-fopenmp", "-I" + include_dir};
  }
  std::vector<std::string> flags = {"-O2", "-std=c++17", "-Xcompiler", "-fPIC", "-shared", "-I" + include_dir};
  for (auto& f : ArchFlags()) flags.push_back(f);
  return flags;
}

}  // namespace anvil
