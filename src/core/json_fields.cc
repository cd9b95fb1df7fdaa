#include "core/json_fields.h"

#include <nlohmann/json.hpp>

#include "core/files.h"

namespace anvil {

nlohmann::json ReadJsonObject(const std::filesystem::path& path) {
  auto text = ReadFile(path);
  if (!text.ok()) return nlohmann::json::object();
  nlohmann::json j = nlohmann::json::parse(text.value(), nullptr, false);
  return j.is_object() ? j : nlohmann::json::object();
}

std::vector<std::string> JsonStrings(const nlohmann::json& j, const char* key) {
  std::vector<std::string> out;
  if (j.is_object() && j.contains(key) && j[key].is_array()) {
    for (const auto& v : j[key]) {
      if (v.is_string()) out.push_back(v.get<std::string>());
    }
  }
  return out;
}

}  // namespace anvil
