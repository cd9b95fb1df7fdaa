#include "backend/backend.h"

#include <sys/stat.h>

#include <algorithm>
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

namespace {

// $CUDA_VISIBLE_DEVICES split at commas; empty when unset.
std::vector<std::string> VisibleDevices() {
  std::vector<std::string> out;
  const char* env = std::getenv("CUDA_VISIBLE_DEVICES");
  if (env == nullptr) return out;
  std::string s = env;
  std::size_t start = 0;
  while (start <= s.size()) {
    const std::size_t comma = s.find(',', start);
    std::string item = s.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (!item.empty()) out.push_back(item);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace

Backend Backend::OnDevice(int index) const {
  Backend b = *this;
  b.device_index_ = kind_ == BackendKind::kCpu ? -1 : index;
  return b;
}

std::string Backend::AssignedDeviceId() const {
  if (device_index_ < 0) return "";
  const std::vector<std::string> visible = VisibleDevices();
  return device_index_ < static_cast<int>(visible.size()) ? visible[device_index_] : std::to_string(device_index_);
}

bool MpsDaemonListens() {
  const char* dir = std::getenv("CUDA_MPS_PIPE_DIRECTORY");
  const std::string control = std::string(dir != nullptr && *dir != '\0' ? dir : "/tmp/nvidia-mps") + "/control";
  struct stat st {};
  return ::stat(control.c_str(), &st) == 0;
}

std::vector<std::pair<std::string, std::string>> Backend::ChildEnv() const {
  if (kind_ == BackendKind::kCpu) return {};
  std::vector<std::pair<std::string, std::string>> env;
  // Nothing runs under MPS: there a fatal fault in one client takes down the
  // others. A CUDA process that finds no MPS control daemon in its pipe
  // folder (here a path under a file: no one can create it) runs as it would
  // without MPS. Only where a daemon listens: elsewhere nothing changes.
  if (MpsDaemonListens()) env.emplace_back("CUDA_MPS_PIPE_DIRECTORY", kNoMpsPipeDirectory);
  if (device_index_ >= 0) env.emplace_back("CUDA_VISIBLE_DEVICES", AssignedDeviceId());
  return env;
}

int Backend::DeviceCount() const {
  if (kind_ == BackendKind::kCpu || !HasDevice()) return 0;
  // The node's GPUs, asked of nvidia-smi once per process (the quotas'
  // defaults and the devices of --gpus both need them at start-up).
  static const int count = [] {
    ProcessSpec spec;
    spec.argv = {"nvidia-smi", "--query-gpu=index", "--format=csv,noheader"};
    spec.deadline = std::chrono::seconds(20);
    auto r = RunProcess(spec);
    if (!r.ok() || !r.value().Succeeded()) return 0;
    int n = 0;
    for (char c : r.value().out) n += c == '\n' ? 1 : 0;
    return n;
  }();
  const std::vector<std::string> visible = VisibleDevices();
  return std::getenv("CUDA_VISIBLE_DEVICES") != nullptr ? std::min<int>(count, visible.size()) : count;
}

std::optional<std::uint64_t> Backend::DeviceMemoryBytes() const {
  if (kind_ == BackendKind::kCpu || !HasDevice()) return std::nullopt;
  ProcessSpec spec;
  spec.argv = {"nvidia-smi", "--query-gpu=memory.total", "--format=csv,noheader,nounits"};
  if (device_index_ >= 0) spec.argv.push_back("--id=" + AssignedDeviceId());
  spec.deadline = std::chrono::seconds(20);
  auto r = RunProcess(spec);
  if (!r.ok() || !r.value().Succeeded()) return std::nullopt;
  const std::uint64_t mib = std::strtoull(r.value().out.c_str(), nullptr, 10);  // The first line: "143771".
  if (mib == 0) return std::nullopt;
  return mib << 20;
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
