#include "verify/tensor_dir.h"

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string_view>
#include <system_error>

#include "core/files.h"

namespace anvil {
namespace {

using Json = nlohmann::json;

// A manifest this large is not a manifest; refuse before reading it.
constexpr std::uintmax_t kMaxManifestBytes = 64u << 20;

std::string ShapeText(const std::vector<int64_t>& shape) {
  std::string text = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) text += ", ";
    text += std::to_string(shape[i]);
  }
  return text + "]";
}

// Compact JSON; invalid UTF-8 is replaced rather than thrown on.
std::string DumpJson(const Json& value) {
  return value.dump(/*indent=*/-1, /*indent_char=*/' ', /*ensure_ascii=*/false, Json::error_handler_t::replace);
}

bool IsSafeFileName(std::string_view name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string_view::npos &&
         name.find('\0') == std::string_view::npos;
}

// Bytes the entry's file must hold; -1 when it would overflow.
int64_t ExpectedBytes(const TensorEntry& entry) {
  const int64_t n = NumElements(entry.shape);
  const auto size = static_cast<int64_t>(DTypeSize(entry.dtype));
  if (n < 0 || n > std::numeric_limits<int64_t>::max() / size) return -1;
  return n * size;
}

Result<TensorEntry> ParseEntry(const Json& item, std::size_t position) {
  const std::string where = "tensors[" + std::to_string(position) + "]";
  if (!item.is_object()) return Status::Error(where + " is not an object");
  const auto name = item.find("name");
  if (name == item.end() || !name->is_string()) return Status::Error(where + " has no string \"name\"");
  TensorEntry entry;
  entry.name = name->get<std::string>();
  const std::string label = where + " ('" + entry.name + "')";

  if (const auto scalar = item.find("scalar"); scalar != item.end()) {
    entry.is_scalar = true;
    entry.scalar_json = DumpJson(*scalar);
    return entry;
  }
  const auto dtype = item.find("dtype");
  if (dtype == item.end() || !dtype->is_string()) return Status::Error(label + " has no string \"dtype\"");
  Result<DType> parsed = ParseDType(dtype->get<std::string>());
  if (!parsed.ok()) return Status::Error(label + ": " + parsed.message());
  entry.dtype = parsed.value();

  const auto shape = item.find("shape");
  if (shape == item.end() || !shape->is_array()) return Status::Error(label + " has no \"shape\" array");
  for (const Json& dim : *shape) {
    if (!dim.is_number_integer() ||
        (dim.is_number_unsigned() && dim.get<uint64_t>() > uint64_t{std::numeric_limits<int64_t>::max()})) {
      return Status::Error(label + " has a shape entry that is not an int64: " + DumpJson(dim));
    }
    entry.shape.push_back(dim.get<int64_t>());
  }
  if (NumElements(entry.shape) < 0 || ExpectedBytes(entry) < 0) {
    return Status::Error(label + " has an invalid shape " + ShapeText(entry.shape));
  }

  const auto file = item.find("file");
  if (file == item.end() || !file->is_string()) return Status::Error(label + " has no string \"file\"");
  entry.file = file->get<std::string>();
  if (!IsSafeFileName(entry.file)) {
    return Status::Error(label + " has an unsafe file name '" + entry.file + "'");
  }
  return entry;
}

Json EntryToJson(const TensorEntry& entry, Status* status) {
  Json item = Json::object();
  item["name"] = entry.name;
  if (entry.is_scalar) {
    Json value = Json::parse(entry.scalar_json, nullptr, /*allow_exceptions=*/false);
    if (value.is_discarded()) {
      *status = Status::Error("scalar '" + entry.name + "' is not valid JSON: " + entry.scalar_json);
    }
    item["scalar"] = std::move(value);
    return item;
  }
  item["dtype"] = std::string(DTypeName(entry.dtype));
  item["shape"] = entry.shape;
  item["file"] = entry.file;
  return item;
}

}  // namespace

Result<std::vector<TensorEntry>> ReadTensorManifest(const std::filesystem::path& dir) {
  const std::filesystem::path manifest_path = dir / kTensorManifestName;
  std::error_code ec;
  const std::uintmax_t size = std::filesystem::file_size(manifest_path, ec);
  if (ec) return Status::Error("cannot read " + manifest_path.string() + ": " + ec.message());
  if (size > kMaxManifestBytes) {
    return Status::Error(manifest_path.string() + " is too large (" + std::to_string(size) + " bytes)");
  }
  Result<std::string> text = ReadFile(manifest_path);
  if (!text.ok()) return text.status();

  const Json manifest = Json::parse(text.value(), nullptr, /*allow_exceptions=*/false);
  if (manifest.is_discarded()) return Status::Error(manifest_path.string() + " is not valid JSON");
  if (!manifest.is_object()) return Status::Error(manifest_path.string() + " is not a JSON object");
  const auto version = manifest.find("version");
  if (version == manifest.end() || !version->is_number_integer() || version->get<int64_t>() != kTensorDirVersion) {
    return Status::Error(manifest_path.string() + ": unsupported version (want " + std::to_string(kTensorDirVersion) +
                         ")");
  }
  const auto tensors = manifest.find("tensors");
  if (tensors == manifest.end() || !tensors->is_array()) {
    return Status::Error(manifest_path.string() + " has no \"tensors\" array");
  }
  std::vector<TensorEntry> entries;
  entries.reserve(tensors->size());
  for (std::size_t i = 0; i < tensors->size(); ++i) {
    Result<TensorEntry> entry = ParseEntry((*tensors)[i], i);
    if (!entry.ok()) return Status::Error(manifest_path.string() + ": " + entry.message());
    entries.push_back(std::move(entry).value());
  }
  return entries;
}

namespace {

// The path of a (non-scalar) entry's file after checking its name and that its
// size is NumElements(shape) * DTypeSize(dtype).
Result<std::filesystem::path> CheckedTensorFile(const std::filesystem::path& dir, const TensorEntry& entry) {
  if (entry.is_scalar) return Status::Error("'" + entry.name + "' is a scalar and has no file");
  if (!IsSafeFileName(entry.file)) {
    return Status::Error("'" + entry.name + "' has an unsafe file name '" + entry.file + "'");
  }
  const int64_t expected = ExpectedBytes(entry);
  if (expected < 0) return Status::Error("'" + entry.name + "' has an invalid shape " + ShapeText(entry.shape));
  const std::filesystem::path path = dir / entry.file;
  std::error_code ec;
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) return Status::Error("tensor '" + entry.name + "': cannot read " + path.string() + ": " + ec.message());
  if (size != static_cast<std::uintmax_t>(expected)) {
    return Status::Error("tensor '" + entry.name + "' (" + entry.file + ") has " + std::to_string(size) +
                         " bytes, expected " + std::to_string(expected) + " (shape " + ShapeText(entry.shape) + " " +
                         std::string(DTypeName(entry.dtype)) + " = " + std::to_string(NumElements(entry.shape)) +
                         " elements x " + std::to_string(DTypeSize(entry.dtype)) + " bytes)");
  }
  return path;
}

}  // namespace

Result<std::string> ReadTensorBytes(const std::filesystem::path& dir, const TensorEntry& entry) {
  auto path = CheckedTensorFile(dir, entry);
  if (!path.ok()) return path.status();
  Result<std::string> bytes = ReadFile(path.value());
  if (!bytes.ok()) return bytes.status();
  if (bytes.value().size() != static_cast<std::size_t>(ExpectedBytes(entry))) {
    return Status::Error("tensor '" + entry.name + "' (" + entry.file + ") changed size while being read");
  }
  return bytes;
}

Result<MappedFile> MapTensorBytes(const std::filesystem::path& dir, const TensorEntry& entry) {
  auto path = CheckedTensorFile(dir, entry);
  if (!path.ok()) return path.status();
  Result<MappedFile> file = MappedFile::Open(path.value());
  if (!file.ok()) return file.status();
  if (file.value().size() != static_cast<std::size_t>(ExpectedBytes(entry))) {
    return Status::Error("tensor '" + entry.name + "' (" + entry.file + ") changed size while being read");
  }
  return file;
}

Status WriteTensorDir(const std::filesystem::path& dir, const std::vector<TensorData>& tensors) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status::Error("cannot create " + dir.string() + ": " + ec.message());

  Json items = Json::array();
  for (const TensorData& t : tensors) {
    const TensorEntry& entry = t.entry;
    if (!entry.is_scalar) {
      if (!IsSafeFileName(entry.file)) {
        return Status::Error("'" + entry.name + "' has an unsafe file name '" + entry.file + "'");
      }
      const int64_t expected = ExpectedBytes(entry);
      if (expected < 0 || t.bytes.size() != static_cast<std::size_t>(expected)) {
        return Status::Error("tensor '" + entry.name + "' has " + std::to_string(t.bytes.size()) + " bytes, expected " +
                             std::to_string(expected) + " for shape " + ShapeText(entry.shape) + " " +
                             std::string(DTypeName(entry.dtype)));
      }
      if (Status s = WriteFileAtomic(dir / entry.file, t.bytes); !s.ok()) return s;
    }
    Status status;
    items.push_back(EntryToJson(entry, &status));
    if (!status.ok()) return status;
  }
  const Json manifest = {{"version", kTensorDirVersion}, {"tensors", std::move(items)}};
  return WriteFileAtomic(dir / kTensorManifestName, DumpJson(manifest));
}

TensorView MakeTensorView(const TensorEntry& entry, const std::string& bytes) {
  return TensorView{entry.dtype, entry.shape, bytes.data()};
}

}  // namespace anvil
