#include "gen/api_key.h"

#include <cstdlib>

#include "core/files.h"

namespace anvil {
namespace fs = std::filesystem;
namespace {

constexpr const char* kKeyVariables[] = {"ANVIL_OPENAI_API_KEY", "OPENAI_API_KEY"};

// Whether `path` is `folder` or inside it (both canonical).
bool Within(const fs::path& path, const fs::path& folder) {
  auto p = path.begin();
  for (auto f = folder.begin(); f != folder.end(); ++f, ++p) {
    if (f->empty()) continue;  // A trailing slash.
    if (p == path.end() || *p != *f) return false;
  }
  return true;
}

std::string Trimmed(const std::string& text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t\r\n") - first + 1);
}

}  // namespace

Result<ApiKey> ResolveApiKey(const std::string& key_file, const std::vector<fs::path>& candidate_readable) {
  if (key_file.empty()) {
    for (const char* variable : kKeyVariables) {
      if (const char* set = std::getenv(variable); set != nullptr && *set != '\0')
        return ApiKey{Trimmed(set), variable};
    }
    return ApiKey{"", "none"};
  }
  std::error_code ec;
  const fs::path real = fs::canonical(key_file, ec);
  if (ec) return Status::Error("--api-key-file " + key_file + ": " + ec.message());
  for (const fs::path& readable : candidate_readable) {
    const fs::path folder = fs::weakly_canonical(readable, ec);
    if (!ec && Within(real, folder)) {
      return Status::Error("--api-key-file " + key_file + " is inside " + folder.string() +
                           ", which candidate code may read: move the key to a file of your own outside it (e.g. "
                           "~/.config/anvil/key, mode 600), or set ANVIL_OPENAI_API_KEY");
    }
  }
  auto text = ReadFile(real);
  if (!text.ok()) return Status::Error("--api-key-file " + key_file + ": " + text.message());
  const std::string key = Trimmed(text.value());
  if (key.empty()) return Status::Error("--api-key-file " + key_file + " is empty");
  if (key.find_first_of("\r\n") != std::string::npos) {
    return Status::Error("--api-key-file " + key_file + " holds more than one line: it should hold the key alone");
  }
  return ApiKey{key, "--api-key-file " + key_file};
}

}  // namespace anvil
