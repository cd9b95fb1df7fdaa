// A backend is a toolchain plus a device runtime (DESIGN.md "Backends"). This
// is the engine's view of one: its name, the torch device string the Python
// side uses, how native sources are compiled, and whether a device is present.
// Backend objects are immutable and thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"

namespace anvil {

// CUDA_MPS_PIPE_DIRECTORY of every process anvil starts on a GPU: a path under
// a file, which no MPS control daemon can listen in (Backend::ChildEnv).
inline constexpr char kNoMpsPipeDirectory[] = "/dev/null/anvil-no-mps";

// Whether an MPS control daemon's pipe is there: `control` in
// $CUDA_MPS_PIPE_DIRECTORY, or in /tmp/nvidia-mps when that is unset.
bool MpsDaemonListens();

enum class BackendKind { kCpu, kCuda };

class Backend {
 public:
  static Result<Backend> FromName(const std::string& name);  // "cpu" | "cuda"

  BackendKind kind() const { return kind_; }
  const std::string& name() const { return name_; }
  // "cpu" or "cuda".
  std::string TorchDevice() const { return name_; }
  // Whether a device for this backend is present on this machine (cpu: always).
  bool HasDevice() const;
  // The compiler for native sources: g++ (cpu) or nvcc (cuda).
  std::string NativeCompiler() const;
  // Flags to build a native candidate into a shared object; `include_dir`
  // holds anvil/native.h.
  std::vector<std::string> NativeFlags(const std::string& include_dir) const;
  // The device model, part of every cache key for timings: the CPU model name
  // (cpu) or the first GPU's name from nvidia-smi (cuda); memoized.
  std::string DeviceModel() const;
  // Architecture flags for nvcc (ANVIL_CUDA_ARCH, default sm_90); empty on cpu.
  std::vector<std::string> ArchFlags() const;

  // The same backend on one GPU of the node (0-based, among the GPUs this
  // process may use: $CUDA_VISIBLE_DEVICES when set). Processes started for it
  // see that GPU alone (ChildEnv).
  Backend OnDevice(int index) const;
  int device_index() const { return device_index_; }
  // Environment for the processes that use the device (cuda; cpu: none):
  // where an MPS control daemon listens (MpsDaemonListens),
  // CUDA_MPS_PIPE_DIRECTORY where none can (kNoMpsPipeDirectory), so that none
  // of them runs under MPS; CUDA_VISIBLE_DEVICES naming this backend's GPU
  // when it has one assigned.
  std::vector<std::pair<std::string, std::string>> ChildEnv() const;
  // GPUs of the node this process may use (nvidia-smi; $CUDA_VISIBLE_DEVICES
  // narrows them); 0 on cpu or when none answers.
  int DeviceCount() const;
  // This backend's GPU's memory in bytes (nvidia-smi's memory.total; the
  // first GPU the process sees when none is assigned); nullopt on cpu or when
  // nvidia-smi does not answer.
  std::optional<std::uint64_t> DeviceMemoryBytes() const;

 private:
  Backend(BackendKind kind, std::string name) : kind_(kind), name_(std::move(name)) {}
  // The id of this backend's GPU as nvidia-smi and CUDA_VISIBLE_DEVICES name
  // it (an index or UUID from $CUDA_VISIBLE_DEVICES); "" when none is assigned.
  std::string AssignedDeviceId() const;
  BackendKind kind_;
  std::string name_;
  int device_index_ = -1;  // -1: whatever the process sees.
};

}  // namespace anvil
