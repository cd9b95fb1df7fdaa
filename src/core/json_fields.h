// Reading the small JSON files workers write (error.json, aten_ops.json,
// tamper.json, timeline.json, extract.json): lenient by design — a missing or
// malformed file or field reads as empty, and the caller decides what absence
// means. Thread-safe.
#pragma once

#include <filesystem>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace anvil {

// The file's top-level object; an empty object when it is missing or is not
// a JSON object.
nlohmann::json ReadJsonObject(const std::filesystem::path& path);

// The strings of j[key] when it is an array (other elements skipped); empty
// otherwise.
std::vector<std::string> JsonStrings(const nlohmann::json& j, const char* key);

}  // namespace anvil
