// A read-only memory map of a whole file: gigabyte tensors are compared in
// place instead of being copied into memory first. Move-only; unmaps on
// destruction. Not thread-safe to move while another thread reads it.
#pragma once

#include <cstddef>
#include <filesystem>

#include "core/status.h"

namespace anvil {

class MappedFile {
 public:
  MappedFile() = default;
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  // Maps `path`. An empty file maps to size() == 0 and data() == nullptr.
  static Result<MappedFile> Open(const std::filesystem::path& path);

  const void* data() const { return data_; }
  std::size_t size() const { return size_; }

 private:
  void Reset();

  void* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace anvil
