#include "gen/prompt.h"

#include <nlohmann/json.hpp>

#include "core/environment.h"
#include "core/files.h"

namespace anvil {
namespace fs = std::filesystem;
namespace {

using nlohmann::json;

// A file named by the manifest, read from the prompt's folder.
Result<std::string> ReadPart(const fs::path& folder, const json& manifest, const std::string& key) {
  const auto it = manifest.find(key);
  if (it == manifest.end() || !it->is_string()) {
    return Status::Error((folder / "prompt.json").string() + ": \"" + key + "\" must name a file");
  }
  const fs::path file = folder / it->get<std::string>();
  auto text = ReadFile(file);
  if (!text.ok()) return Status::Error("prompt " + folder.filename().string() + ": " + text.message());
  std::string body = text.value();
  while (!body.empty() && (body.back() == '\n' || body.back() == ' ')) body.pop_back();
  return body;
}

std::string KnownIds(const fs::path& prompts_dir) {
  std::string ids;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(prompts_dir, ec)) {
    if (fs::exists(entry.path() / "prompt.json", ec))
      ids += (ids.empty() ? "" : ", ") + entry.path().filename().string();
  }
  return ids.empty() ? "(none)" : ids;
}

}  // namespace

fs::path PromptsDir() { return SourceDir() / "prompts"; }

Result<PromptTemplate> LoadPrompt(const std::string& id, const fs::path& prompts_dir) {
  const fs::path folder = prompts_dir / id;
  std::error_code ec;
  if (id.empty() || id.find('/') != std::string::npos || !fs::exists(folder / "prompt.json", ec)) {
    return Status::Error("no prompt '" + id + "' in " + prompts_dir.string() + " (there are: " + KnownIds(prompts_dir) +
                         ")");
  }
  auto text = ReadFile(folder / "prompt.json");
  if (!text.ok()) return text.status();
  const json manifest = json::parse(text.value(), nullptr, false);
  const std::string where = (folder / "prompt.json").string();
  if (!manifest.is_object()) return Status::Error(where + " is not a JSON object");
  PromptTemplate p;
  p.id = manifest.value("id", "");
  if (p.id != id) return Status::Error(where + ": its \"id\" is '" + p.id + "', not its folder's name '" + id + "'");
  if (!manifest.contains("version") || !manifest["version"].is_number_integer()) {
    return Status::Error(where + ": \"version\" must be an integer");
  }
  p.version = manifest["version"].get<int>();
  p.system = manifest.value("system", "");
  auto user = ReadPart(folder, manifest, "user");
  if (!user.ok()) return user.status();
  p.user = user.value();
  auto reference = ReadPart(folder, manifest, "example_reference");
  if (!reference.ok()) return reference.status();
  p.example_reference = reference.value();
  if (!manifest.contains("variants") || !manifest["variants"].is_object()) {
    return Status::Error(where + ": \"variants\" must be an object");
  }
  for (const auto& [key, v] : manifest["variants"].items()) {
    if (!v.is_object()) return Status::Error(where + ": variant " + key + " is not an object");
    PromptVariant variant;
    auto example = ReadPart(folder, v, "example");
    if (!example.ok()) return example.status();
    auto instruction = ReadPart(folder, v, "instruction");
    if (!instruction.ok()) return instruction.status();
    variant.example = example.value();
    variant.instruction = instruction.value();
    variant.language = v.value("language", "");
    p.variants[key] = std::move(variant);
  }
  if (const auto needs = manifest.find("needs"); needs != manifest.end() && needs->is_array()) {
    for (const json& n : *needs) p.needs_spec = p.needs_spec || n == "spec";
  }
  if (manifest.contains("devices") && manifest["devices"].is_object()) {
    for (const auto& [backend, name] : manifest["devices"].items()) {
      if (name.is_string()) p.devices[backend] = name.get<std::string>();
    }
  }
  return p;
}

Result<std::string> FillTemplate(const std::string& text, const std::map<std::string, std::string>& fields) {
  std::string out;
  std::size_t at = 0;
  while (true) {
    const std::size_t open = text.find("{{", at);
    if (open == std::string::npos) break;
    const std::size_t close = text.find("}}", open + 2);
    if (close == std::string::npos) break;
    const std::string name = text.substr(open + 2, close - open - 2);
    const auto it = fields.find(name);
    if (it == fields.end()) return Status::Error("the prompt names an unknown field {{" + name + "}}");
    out.append(text, at, open - at);
    out += it->second;
    at = close + 2;
  }
  out.append(text, at, std::string::npos);
  return out;
}

Result<std::vector<ChatMessage>> FirstTurnMessages(const PromptTemplate& prompt, const std::string& reference,
                                                   const std::string& backend, const std::string& format,
                                                   const std::map<std::string, std::string>& extra) {
  const auto variant = prompt.variants.find(backend + "/" + format);
  if (variant == prompt.variants.end()) {
    std::string have;
    for (const auto& [key, v] : prompt.variants) have += (have.empty() ? "" : ", ") + key;
    return Status::Error("prompt " + prompt.id + " has no variant for backend " + backend + " and format " + format +
                         " (it has: " + have + ")");
  }
  const auto device = prompt.devices.find(backend);
  std::map<std::string, std::string> fields = {{"device", device != prompt.devices.end() ? device->second : backend},
                                               {"backend", backend},
                                               {"format", format},
                                               {"language", variant->second.language}};
  auto instruction = FillTemplate(variant->second.instruction, fields);
  if (!instruction.ok()) return instruction.status();
  auto system = FillTemplate(prompt.system, fields);
  if (!system.ok()) return system.status();
  fields["instruction"] = instruction.value();
  fields["example_reference"] = prompt.example_reference;
  fields["example"] = variant->second.example;
  std::string ref = reference;
  while (!ref.empty() && (ref.back() == '\n' || ref.back() == ' ')) ref.pop_back();
  fields["reference"] = ref;
  for (const auto& [name, value] : extra) fields[name] = value;
  auto user = FillTemplate(prompt.user, fields);
  if (!user.ok()) return user.status();
  std::vector<ChatMessage> messages;
  if (!system.value().empty()) messages.push_back({"system", system.value()});
  messages.push_back({"user", user.value()});
  return messages;
}

}  // namespace anvil
