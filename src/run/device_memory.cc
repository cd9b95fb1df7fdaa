#include "run/device_memory.h"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <limits>
#include <mutex>
#include <set>
#include <utility>

#include "core/files.h"

namespace anvil {
namespace {

// NVML's types and entry points, as its header declares them (nvml.h is
// not on every machine that builds anvil; the library is on every one with
// a driver).
using nvmlReturn_t = int;
using nvmlDevice_t = struct nvmlDevice_st*;
constexpr nvmlReturn_t kNvmlSuccess = 0;
constexpr nvmlReturn_t kNvmlInsufficientSize = 7;
struct NvmlProcessInfo {  // nvmlProcessInfo_v2_t, what _v2 and _v3 fill.
  unsigned int pid;
  unsigned long long used_gpu_memory;  // NOLINT(runtime/int): NVML's own type.
  unsigned int gpu_instance_id;
  unsigned int compute_instance_id;
};
struct NvmlMemory {                      // nvmlMemory_t
  unsigned long long total, free, used;  // NOLINT(runtime/int)
};

class Nvml : public DeviceMemoryReader {
 public:
  static std::shared_ptr<Nvml> Open(std::string* why_not) {
    void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
      *why_not = std::string("NVML is not here (") + dlerror() + ")";
      return nullptr;
    }
    auto nvml = std::shared_ptr<Nvml>(new Nvml());
    auto resolve = [&](auto& fn, std::initializer_list<const char*> names) {
      for (const char* name : names) {
        if (void* sym = dlsym(lib, name)) {
          fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(sym);
          return true;
        }
      }
      *why_not = std::string("NVML lacks ") + *names.begin();
      return false;
    };
    if (!resolve(nvml->init_, {"nvmlInit_v2"}) || !resolve(nvml->count_, {"nvmlDeviceGetCount_v2"}) ||
        !resolve(nvml->handle_, {"nvmlDeviceGetHandleByIndex_v2"}) ||
        !resolve(nvml->processes_,
                 {"nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses_v2"}) ||
        !resolve(nvml->memory_, {"nvmlDeviceGetMemoryInfo"})) {
      return nullptr;
    }
    (void)resolve(nvml->error_string_, {"nvmlErrorString"});
    if (nvmlReturn_t r = nvml->init_(); r != kNvmlSuccess) {
      *why_not = "NVML did not start: " + nvml->Say(r);
      return nullptr;
    }
    unsigned int count = 0;
    if (nvmlReturn_t r = nvml->count_(&count); r != kNvmlSuccess || count == 0) {
      *why_not = r != kNvmlSuccess ? "NVML cannot count the devices: " + nvml->Say(r) : "NVML sees no device";
      return nullptr;
    }
    nvml->device_bytes_ = std::numeric_limits<std::uint64_t>::max();
    for (unsigned int i = 0; i < count; ++i) {
      nvmlDevice_t device = nullptr;
      NvmlMemory memory{};
      if (nvmlReturn_t r = nvml->handle_(i, &device); r != kNvmlSuccess) {
        *why_not = "NVML cannot open device " + std::to_string(i) + ": " + nvml->Say(r);
        return nullptr;
      }
      if (nvmlReturn_t r = nvml->memory_(device, &memory); r != kNvmlSuccess) {
        *why_not = "NVML cannot read device " + std::to_string(i) + "'s memory: " + nvml->Say(r);
        return nullptr;
      }
      nvml->devices_.push_back(device);
      nvml->device_bytes_ = std::min<std::uint64_t>(nvml->device_bytes_, memory.total);
    }
    return nvml;
  }

  Result<std::map<pid_t, std::uint64_t>> Read() override {
    std::map<pid_t, std::uint64_t> used;
    for (nvmlDevice_t device : devices_) {
      unsigned int n = static_cast<unsigned int>(infos_.size());
      nvmlReturn_t r = processes_(device, &n, infos_.data());
      if (r == kNvmlInsufficientSize) {
        infos_.resize(n + 16);
        n = static_cast<unsigned int>(infos_.size());
        r = processes_(device, &n, infos_.data());
      }
      if (r != kNvmlSuccess) return Status::MachineError("NVML cannot list the device's processes: " + Say(r));
      for (unsigned int i = 0; i < n; ++i) {
        // Not available (some containers): the process's memory is not known.
        if (infos_[i].used_gpu_memory == std::numeric_limits<unsigned long long>::max()) {  // NOLINT(runtime/int)
          return Status::MachineError("NVML does not say what each process holds here");
        }
        used[static_cast<pid_t>(infos_[i].pid)] += infos_[i].used_gpu_memory;
      }
    }
    return used;
  }

  std::uint64_t DeviceBytes() const override { return device_bytes_; }

 private:
  std::string Say(nvmlReturn_t r) const {
    const char* text = error_string_ != nullptr ? error_string_(r) : nullptr;
    return text != nullptr ? std::string(text) : "error " + std::to_string(r);
  }

  nvmlReturn_t (*init_)() = nullptr;
  nvmlReturn_t (*count_)(unsigned int*) = nullptr;
  nvmlReturn_t (*handle_)(unsigned int, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*processes_)(nvmlDevice_t, unsigned int*, NvmlProcessInfo*) = nullptr;
  nvmlReturn_t (*memory_)(nvmlDevice_t, NvmlMemory*) = nullptr;
  const char* (*error_string_)(nvmlReturn_t) = nullptr;
  std::vector<nvmlDevice_t> devices_;
  std::uint64_t device_bytes_ = 0;
  std::vector<NvmlProcessInfo> infos_ = std::vector<NvmlProcessInfo>(64);
};

}  // namespace

std::shared_ptr<DeviceMemoryReader> NvmlReader(std::string* why_not) {
  // Opened once: NVML's start takes tens of milliseconds. Read() is called
  // by one watch at a time.
  static std::mutex mu;
  static std::string why;
  static std::shared_ptr<Nvml> nvml = Nvml::Open(&why);
  if (why_not != nullptr) *why_not = why;
  if (nvml == nullptr) return nullptr;
  // Each caller gets a handle that reads under the one lock (the reader's
  // buffer is shared).
  struct Locked : DeviceMemoryReader {
    Result<std::map<pid_t, std::uint64_t>> Read() override {
      std::lock_guard<std::mutex> lock(mu);
      return nvml->Read();
    }
    std::uint64_t DeviceBytes() const override { return nvml->DeviceBytes(); }
  };
  return std::make_shared<Locked>();
}

DeviceMemoryWatch::DeviceMemoryWatch(std::shared_ptr<DeviceMemoryReader> reader, std::uint64_t quota_bytes,
                                     std::function<std::vector<pid_t>()> pids, std::function<void()> over,
                                     std::map<pid_t, std::uint64_t> planned, std::chrono::milliseconds every)
    : reader_(std::move(reader)),
      quota_(quota_bytes),
      pids_(std::move(pids)),
      on_over_(std::move(over)),
      planned_(std::move(planned)),
      every_(every),
      thread_([this] { Loop(); }) {}

DeviceMemoryWatch::~DeviceMemoryWatch() { Stop(); }

void DeviceMemoryWatch::Stop() {
  {
    std::lock_guard<std::mutex> lock(stop_mu_);
    stop_ = true;
  }
  stop_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::string DeviceMemoryWatch::error() const {
  std::lock_guard<std::mutex> lock(error_mu_);
  return error_;
}

std::string DeviceMemoryWatch::others() const {
  std::lock_guard<std::mutex> lock(error_mu_);
  return others_;
}

void DeviceMemoryWatch::Loop() {
  while (!stop_) {
    auto used = reader_->Read();
    if (!used.ok()) {
      std::lock_guard<std::mutex> lock(error_mu_);
      error_ = used.message();
      return;
    }
    std::uint64_t held = 0, others = 0;
    std::vector<pid_t> pids = pids_();
    const std::set<pid_t> ours(pids.begin(), pids.end());
    for (const auto& [pid, bytes] : used.value()) {
      if (ours.count(pid) > 0) {
        held += bytes;
      } else if (auto budget = planned_.find(pid); budget == planned_.end()) {
        others += bytes;
      } else if (budget->second > 0 && bytes > budget->second) {
        others += bytes - budget->second;
      }
    }
    if (held > peak_) peak_ = held;
    if (others > others_peak_) {
      others_peak_ = others;
      std::string who = OtherHolders(used.value(), pids, 3, planned_);
      std::lock_guard<std::mutex> lock(error_mu_);
      others_ = std::move(who);
    }
    if (held > quota_) {
      over_ = true;
      on_over_();
      return;
    }
    std::unique_lock<std::mutex> lock(stop_mu_);
    stop_cv_.wait_for(lock, every_, [this] { return stop_.load(); });
  }
}

std::string OverDeviceMemoryQuota(std::uint64_t quota_bytes, std::uint64_t peak_bytes) {
  return "went over its device-memory quota of " + std::to_string(quota_bytes >> 20) + " MiB (it held " +
         std::to_string(peak_bytes >> 20) + " MiB, by the driver's count) and anvil killed it";
}

namespace {
std::mutex planned_mu;
// Never destroyed: a task server may end in the static destructors at exit
// (TaskServer::For keeps them), after this set would have.
std::map<pid_t, std::uint64_t>& Planned() {
  static auto* planned = new std::map<pid_t, std::uint64_t>();
  return *planned;
}
}  // namespace

void PlanDeviceProcess(pid_t pid, bool planned, std::uint64_t budget_bytes) {
  std::lock_guard<std::mutex> lock(planned_mu);
  if (planned) {
    Planned()[pid] = budget_bytes;
  } else {
    Planned().erase(pid);
  }
}

std::map<pid_t, std::uint64_t> PlannedDeviceBudgets() {
  std::lock_guard<std::mutex> lock(planned_mu);
  std::map<pid_t, std::uint64_t> budgets = Planned();
  budgets[getpid()] = 0;
  return budgets;
}

std::vector<pid_t> PlannedDeviceProcesses() {
  std::vector<pid_t> pids;
  for (const auto& [pid, budget] : PlannedDeviceBudgets()) pids.push_back(pid);
  return pids;
}

bool SaysDeviceOutOfMemory(const std::string& text) {
  std::string lower = text;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const char* words : {"out of memory", "outofmemoryerror", "cuda_error_out_of_memory",
                            "cudaerrormemoryallocation", "cublas_status_alloc_failed", "cudnn_status_alloc_failed"}) {
    if (lower.find(words) != std::string::npos) return true;
  }
  return false;
}

std::string OtherHolders(const std::map<pid_t, std::uint64_t>& used, const std::vector<pid_t>& ours, std::size_t most,
                         const std::map<pid_t, std::uint64_t>& budgeted) {
  const std::set<pid_t> mine(ours.begin(), ours.end());
  std::vector<std::pair<std::uint64_t, pid_t>> others;  // (bytes that count, pid)
  for (const auto& [pid, bytes] : used) {
    if (auto budget = budgeted.find(pid); budget != budgeted.end()) {
      if (budget->second > 0 && bytes > budget->second) others.emplace_back(bytes - budget->second, pid);
    } else if (mine.count(pid) == 0 && bytes > 0) {
      others.emplace_back(bytes, pid);
    }
  }
  std::sort(others.rbegin(), others.rend());
  std::string said;
  for (std::size_t i = 0; i < others.size() && i < most; ++i) {
    const auto [counted, pid] = others[i];
    std::string name;
    if (auto comm = ReadFile("/proc/" + std::to_string(pid) + "/comm"); comm.ok()) {
      name = comm.value().substr(0, comm.value().find('\n'));
    }
    const std::uint64_t bytes = used.at(pid);
    said += (i > 0 ? ", " : "") + std::string("pid ") + std::to_string(pid) + (name.empty() ? "" : " (" + name + ")") +
            " held " + std::to_string(bytes >> 20) + " MiB" +
            (counted < bytes ? ", " + std::to_string(counted >> 20) + " MiB beyond its budget" : "");
  }
  if (others.size() > most) said += " and " + std::to_string(others.size() - most) + " more";
  return said;
}

Status WaitForIdleDevice(DeviceMemoryReader& reader, const std::vector<pid_t>& ours, std::chrono::milliseconds wait,
                         std::chrono::milliseconds every) {
  const auto until = std::chrono::steady_clock::now() + wait;
  for (;;) {
    auto used = reader.Read();
    if (!used.ok()) return used.status();
    const std::string others = OtherHolders(used.value(), ours);
    if (others.empty()) return Status::Ok();
    if (std::chrono::steady_clock::now() + every > until) {
      return Status::MachineError("the device was still not idle after " +
                                  std::to_string(std::chrono::duration_cast<std::chrono::seconds>(wait).count()) +
                                  " s: " + others);
    }
    std::this_thread::sleep_for(every);
  }
}

}  // namespace anvil
