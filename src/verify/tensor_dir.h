// Reading and writing tensor directories (docs/protocol.md): `tensors.json`
// plus one raw little-endian file per tensor. Directories written by the
// candidate's process are untrusted, so every field and size is checked and a
// file name may not leave the directory. Stateless and thread-safe.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "core/mapped_file.h"
#include "core/status.h"
#include "verify/compare.h"

namespace anvil {

inline constexpr int kTensorDirVersion = 1;
inline constexpr const char* kTensorManifestName = "tensors.json";

struct TensorEntry {
  std::string name;
  DType dtype = DType::kFloat32;  // Unused when is_scalar.
  std::vector<int64_t> shape;     // Unused when is_scalar.
  std::string file;               // Plain file name inside the directory; "" when is_scalar.
  bool is_scalar = false;         // A Python int/float/bool/None recorded inline.
  std::string scalar_json;        // The value as compact JSON text, e.g. "3", "null".
};

// One tensor to write: its entry and, unless entry.is_scalar, its raw bytes.
struct TensorData {
  TensorEntry entry;
  std::string bytes;
};

// The entries of `dir`/tensors.json in order. Error on a missing or malformed
// manifest, a wrong version, an unknown dtype, a negative or overflowing shape,
// or a file name that is empty, contains '/', or is "." or "..".
Result<std::vector<TensorEntry>> ReadTensorManifest(const std::filesystem::path& dir);

// The raw bytes of a (non-scalar) entry. Checks the file's size equals
// NumElements(shape) * DTypeSize(dtype) before reading it.
Result<std::string> ReadTensorBytes(const std::filesystem::path& dir, const TensorEntry& entry);

// The same checks, then the file mapped read-only instead of copied (for
// outputs of gigabytes). The writer must not truncate the file while it is
// mapped: only files of finished, exited processes are mapped.
Result<MappedFile> MapTensorBytes(const std::filesystem::path& dir, const TensorEntry& entry);

// Creates `dir` if needed and writes each tensor's file, then tensors.json
// (all atomically). Error when bytes do not match an entry's shape and dtype,
// a scalar's JSON does not parse, or a file name is unsafe.
Status WriteTensorDir(const std::filesystem::path& dir, const std::vector<TensorData>& tensors);

// A view of `bytes` as the entry's tensor; `bytes` must outlive the view.
TensorView MakeTensorView(const TensorEntry& entry, const std::string& bytes);

}  // namespace anvil
